from __future__ import annotations

import re

import pytest
from django.core.mail import EmailMultiAlternatives, get_connection

from apps.alerts.models import SentMessage

pytestmark = pytest.mark.django_db


def send(backend: str, n: int = 1) -> None:
    connection = get_connection(backend)
    for i in range(n):
        message = EmailMultiAlternatives(
            f"CRITICAL eu-west-1 Galera db{i}: quorum lost",
            "Plain text body",
            "vigil@localhost",
            ["oncall@example.com", "lead@example.com"],
            connection=connection,
        )
        message.attach_alternative("<p>HTML <b>body</b><script>alert(1)</script></p>", "text/html")
        message.send()


def test_it_logs_one_line_per_email_and_keeps_nothing_out_of_demo_mode(caplog, settings):
    settings.VIGIL_DEMO = "false"
    with caplog.at_level("INFO", logger="apps.alerts.mailbox"):
        send("apps.alerts.mailbox.OneLineBackend", 2)
    out = [r.getMessage() for r in caplog.records if r.name == "apps.alerts.mailbox"]
    assert out == [
        "email to oncall@example.com, lead@example.com: CRITICAL eu-west-1 Galera db0: quorum lost",
        "email to oncall@example.com, lead@example.com: CRITICAL eu-west-1 Galera db1: quorum lost",
    ]
    assert not SentMessage.objects.exists()


def test_in_demo_mode_it_keeps_the_latest_messages_for_the_sent_page(settings, monkeypatch):
    from apps.alerts import mailbox

    settings.VIGIL_DEMO = "true"
    monkeypatch.setattr(mailbox, "KEEP", 3)
    send("apps.alerts.mailbox.OneLineBackend", 5)
    kept = list(SentMessage.objects.all())
    assert [m.subject.split()[-3] for m in kept] == ["db4:", "db3:", "db2:"]
    assert kept[0].text == "Plain text body" and "<b>body</b>" in kept[0].html


def test_the_sent_page_shows_the_text_and_frames_the_html_in_a_sandbox(logged_in_client, settings):
    settings.VIGIL_DEMO = "true"
    send("apps.alerts.mailbox.OneLineBackend")
    message = SentMessage.objects.get()
    page = logged_in_client.get("/alerts/sent/").content.decode()
    assert "Plain text body" in page and f'src="/alerts/sent/{message.pk}/html/"' in page
    assert re.search(r'<iframe class="mail-html"\s+sandbox\s', page) and "<script>alert" not in page
    framed = logged_in_client.get(f"/alerts/sent/{message.pk}/html/")
    policy = framed["Content-Security-Policy"]
    assert (
        "sandbox" in policy
        and "default-src 'none'" in policy
        and "frame-ancestors 'self'" in policy
    )
    assert framed["X-Frame-Options"] == "SAMEORIGIN"
    assert logged_in_client.get("/alerts/sent/?message=" + "9" * 40).status_code == 200
    assert logged_in_client.get("/alerts/sent/999999/html/").status_code == 404

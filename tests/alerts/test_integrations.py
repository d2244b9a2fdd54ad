"""Webhook, Slack and PagerDuty channels, against a loopback receiver of the test's own."""

from __future__ import annotations

import hashlib
import hmac
from datetime import timedelta

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.utils import timezone

from apps import alerts
from apps.alerts import delivery
from apps.alerts.integrations import TRANSPORTS
from apps.alerts.models import Channel, Notification
from apps.lib.status import Status, Verdict

pytestmark = pytest.mark.django_db

SECRET = "s3cret-signing-key-0123456789"
ROUTING_KEY = "R0123456789abcdefABCDEF012345678"
CRITICAL = Verdict(Status.CRITICAL, "quorum lost; no node is Primary", {"size": 1})
OK = Verdict(Status.OK, "Primary, 3 of 3 nodes")


def later(minutes: float):
    return time_machine.travel(timezone.now() + timedelta(minutes=minutes))


def test_every_channel_kind_has_a_transport():
    assert set(TRANSPORTS) == set(Channel.Kind.values)


def test_a_webhook_gets_a_signed_json_body_with_the_transition(gadget, make_channel, receiver):
    make_channel("webhook", receiver.url + "/hook?team=ops", SECRET)
    transition = alerts.record(gadget, CRITICAL)
    delivery.send_due()
    (request,) = receiver.requests
    assert request.path == "/hook?team=ops"
    expected = hmac.new(SECRET.encode(), request.body, hashlib.sha256).hexdigest()
    assert request.headers["X-Vigil-Signature"] == f"sha256={expected}"
    assert request.headers["Idempotency-Key"].startswith("vigil-")
    assert request.headers["Host"] == f"127.0.0.1:{receiver.server.server_port}"
    body = request.json
    assert body["version"] == 1
    (event,) = body["events"]
    assert event["id"] == f"vigil-notification-{Notification.objects.get().pk}"
    assert event["status"] == "critical" and event["old_status"] == "unknown"
    assert event["reason"] == "quorum lost; no node is Primary"
    assert event["summary"] == "CRITICAL lab Gadgets gadget g1: quorum lost"
    assert event["subject"]["key"] == f"vigil/gadgets.gadget/{gadget.pk}"
    assert event["subject"]["url"] == f"http://127.0.0.1:8000/gadgets/{gadget.pk}/"  # its page
    assert event["transition_id"] == transition.pk and event["figures"] == {"size": 1}
    assert Notification.objects.get().state == "sent"


def test_a_webhook_is_retried_on_5xx_and_timeouts_with_the_same_idempotency_key(
    gadget, make_channel, receiver, settings
):
    settings.VIGIL_ALERT_HTTP_TIMEOUT = 0.3  # the hang ends the call; its length is not tested
    channel = make_channel("webhook", receiver.url, SECRET)
    receiver.answers = [503, "hang"]
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    with later(1):
        delivery.send_due()
    with later(5):
        delivery.send_due()
    assert len(receiver.requests) == 3
    assert len({r.headers["Idempotency-Key"] for r in receiver.requests}) == 1
    assert len({r.json["events"][0]["id"] for r in receiver.requests}) == 1
    notification = Notification.objects.get()
    assert notification.state == "sent" and notification.attempts == 3
    channel.refresh_from_db()
    assert "The webhook answered 503" in channel.last_error or "timed out" in channel.last_error


def test_a_webhook_answering_404_fails_alone_and_is_not_retried(gadget, make_channel, receiver):
    channel = make_channel("webhook", receiver.url, SECRET)
    receiver.answers = [404]
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    with later(60):
        delivery.send_due()
    assert len(receiver.requests) == 1
    notification = Notification.objects.get()
    assert notification.state == "failed" and notification.failure == "recipient"
    channel.refresh_from_db()
    assert channel.last_error.startswith("The webhook answered 404")
    assert list(channel.failed_notifications()) == [notification]


def test_a_redirect_is_not_followed_and_names_where_it_pointed(gadget, make_channel, receiver):
    make_channel("webhook", receiver.url, SECRET)
    receiver.answers = [("redirect", "http://169.254.169.254/latest/meta-data/")]
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    assert len(receiver.requests) == 1
    notification = Notification.objects.get()
    assert notification.state == "failed"
    assert "redirecting to http://169.254.169.254/latest/meta-data/" in notification.last_error


def test_a_webhook_url_the_outbound_guard_refuses_is_refused_at_save_and_at_send(
    gadget, make_channel, settings, receiver
):
    with pytest.raises(ValidationError) as refused:
        make_channel("webhook", "http://169.254.169.254/hook", SECRET)
    assert "the instance metadata service" in str(refused.value)
    channel = make_channel("webhook", receiver.url, SECRET)
    settings.VIGIL_OUTBOUND_ALLOW_LOOPBACK = False  # e.g. a name that now resolves to loopback
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    assert receiver.requests == []
    notification = Notification.objects.get()
    assert notification.state == "failed"
    assert "127.0.0.1 is refused: a loopback address" in notification.last_error
    channel.refresh_from_db()
    assert "loopback" in channel.last_error


def test_slack_gets_a_readable_message_with_colour_reason_and_link(gadget, make_channel, receiver):
    make_channel("slack", secret=receiver.url + "/services/T000/B000/XXXX")
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    (request,) = receiver.requests
    assert request.path == "/services/T000/B000/XXXX"
    message = request.json
    assert message["text"] == "CRITICAL lab Gadgets gadget g1: quorum lost"
    (attachment,) = message["attachments"]
    assert attachment["color"] == "#cf222e"
    assert attachment["text"] == "quorum lost; no node is Primary"
    assert attachment["title_link"].endswith(f"/gadgets/{gadget.pk}/")


def test_pagerduty_triggers_on_critical_and_resolves_on_recovery_with_the_subject_as_key(
    gadget, make_channel, receiver
):
    receiver.accepted = 202
    make_channel("pagerduty", receiver.url + "/v2/enqueue", ROUTING_KEY)
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    alerts.record(gadget, OK)
    delivery.send_due()
    trigger, resolve = (r.json for r in receiver.requests)
    assert trigger["event_action"] == "trigger" and resolve["event_action"] == "resolve"
    assert trigger["routing_key"] == resolve["routing_key"] == ROUTING_KEY
    assert trigger["dedup_key"] == resolve["dedup_key"] == f"vigil/gadgets.gadget/{gadget.pk}"
    assert trigger["payload"]["severity"] == "critical"
    assert trigger["payload"]["summary"] == "CRITICAL lab Gadgets gadget g1: quorum lost"
    assert trigger["links"][0]["text"] == "Open in Vigil"
    assert Notification.objects.filter(state="sent").count() == 2


def test_pagerduty_refusing_the_event_fails_it_and_429_is_retried(gadget, make_channel, receiver):
    receiver.accepted = 202
    make_channel("pagerduty", receiver.url, ROUTING_KEY)
    receiver.answers = [429, 400]
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    assert Notification.objects.get().state == "pending"
    with later(1):
        delivery.send_due()
    notification = Notification.objects.get()
    assert notification.state == "failed"
    assert notification.last_error.startswith("PagerDuty answered 400")


@pytest.mark.parametrize(
    ("kind", "target", "secret", "field", "words"),
    [
        ("email", "oncall@example.com, nobody@", "", "target", "'nobody@' is not an email address"),
        ("email", "", "", "target", "Give at least one email address"),
        ("webhook", "ftp://example.com/", SECRET, "target", "must start with https://"),
        ("webhook", "https://hooks.example.com/", "short", "secret", "at least 16 characters"),
        ("slack", "", "", "secret", "Give the Slack incoming-webhook URL"),
        ("slack", "", "http://[fe80::1]/x", "secret", "link-local"),
        ("pagerduty", "", "not-a-key", "secret", "32 letters and digits"),
    ],
)
def test_it_says_in_words_what_is_wrong_with_a_channel(kind, target, secret, field, words):
    channel = Channel(name="x", kind=kind, target=target, secret=secret)
    with pytest.raises(ValidationError) as refused:
        channel.full_clean()
    assert words in " ".join(refused.value.message_dict[field])


@pytest.fixture
def tls_receiver(tmp_path, hosts_entry):
    """An HTTPS receiver whose certificate is for a name of the test's own (-> 127.0.0.1)."""
    from tests.services.nginx import write_self_signed_certificate
    from tests.services.receiver import Receiver

    name = hosts_entry("127.0.0.1")
    cert, key = write_self_signed_certificate(tmp_path, name)
    server = Receiver(tls=(cert, key))
    server.name, server.cert = name, cert
    yield server
    server.close()


def test_https_connects_to_the_judged_address_with_sni_and_verification_on_the_name(
    gadget, make_channel, tls_receiver, settings
):
    settings.VIGIL_ALERT_CA_FILE = str(tls_receiver.cert)
    port = tls_receiver.server.server_port
    make_channel("webhook", f"https://{tls_receiver.name}:{port}/hook", SECRET)
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    (request,) = tls_receiver.requests
    assert tls_receiver.server_names == [tls_receiver.name]  # SNI: the name, not the address
    assert request.headers["Host"] == f"{tls_receiver.name}:{port}"
    assert Notification.objects.get().state == "sent"


def test_a_certificate_for_another_name_is_refused(
    gadget, make_channel, tmp_path, hosts_entry, settings
):
    from tests.services.nginx import write_self_signed_certificate
    from tests.services.receiver import Receiver

    cert, key = write_self_signed_certificate(tmp_path, "someone-else.example")
    settings.VIGIL_ALERT_CA_FILE = str(cert)
    other = Receiver(tls=(cert, key))
    try:
        name = hosts_entry("127.0.0.1")
        make_channel("webhook", f"https://{name}:{other.server.server_port}/hook", SECRET)
        alerts.record(gadget, CRITICAL)
        delivery.send_due()
        assert other.requests == []
    finally:
        other.close()
    notification = Notification.objects.get()
    assert notification.state == "failed" and f"TLS to {name} failed" in notification.last_error


def test_a_name_repointed_at_the_metadata_service_after_saving_is_refused_at_send(
    gadget, make_channel, receiver, hosts_entry
):
    name = hosts_entry("127.0.0.1")
    make_channel("webhook", f"http://{name}:{receiver.server.server_port}/", SECRET)
    hosts_entry("169.254.169.254")  # DNS rebinding between save and send
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    assert receiver.requests == []
    notification = Notification.objects.get()
    assert notification.state == "failed"
    assert f"{name} (169.254.169.254) is refused: the instance metadata service" in (
        notification.last_error
    )


def test_a_subject_that_also_paged_alone_resolves_its_own_pagerduty_incident_when_it_closes_the_cause(
    make_gadgets, make_channel, receiver
):
    """b fails for the switch (held on the cause's incident), then for a reason of its own
    (paged alone, under its own key); a recovers first (held), b last: its recovery closes the
    cause, and resolves both PagerDuty incidents it had opened, the cause's and its own."""
    from apps.lib.status import Cause

    switch = Cause("lab/switch-1", "switch switch-1")
    receiver.accepted = 202
    make_channel("pagerduty", receiver.url + "/v2/enqueue", ROUTING_KEY)
    a, b = make_gadgets(2)
    alerts.record(a, Verdict(Status.CRITICAL, "down", cause=switch))
    alerts.record(b, Verdict(Status.CRITICAL, "down", cause=switch))
    delivery.send_due()
    alerts.record(b, Verdict(Status.UNKNOWN, "its own disk too"))  # not the cause's
    delivery.send_due()
    alerts.record(a, OK)
    delivery.send_due()
    alerts.record(b, OK)
    delivery.send_due()
    sent = [(r.json["event_action"], r.json["dedup_key"]) for r in receiver.requests]
    own = f"vigil/gadgets.gadget/{b.pk}"
    assert sent == [
        ("trigger", "vigil/cause/lab/switch-1"),
        ("trigger", own),
        ("resolve", "vigil/cause/lab/switch-1"),
        ("resolve", own),
    ]


def test_a_cause_closed_by_a_subject_that_never_paged_alone_resolves_only_the_cause(
    make_gadgets, make_channel, receiver
):
    from apps.lib.status import Cause

    switch = Cause("lab/switch-1", "switch switch-1")
    receiver.accepted = 202
    make_channel("pagerduty", receiver.url + "/v2/enqueue", ROUTING_KEY)
    a, b = make_gadgets(2)
    for gadget in (a, b):
        alerts.record(gadget, Verdict(Status.CRITICAL, "down", cause=switch))
    delivery.send_due()
    for gadget in (a, b):
        alerts.record(gadget, OK)
    delivery.send_due()
    sent = [(r.json["event_action"], r.json["dedup_key"]) for r in receiver.requests]
    assert sent == [
        ("trigger", "vigil/cause/lab/switch-1"),
        ("resolve", "vigil/cause/lab/switch-1"),
    ]

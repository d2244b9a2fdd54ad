"""Channels fail loudly: validated on save everywhere, failures listed with "send again", a
banner for admins while Vigil's configuration refuses, and the daily undeliverable check."""

from __future__ import annotations

import email
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from apps import alerts
from apps.alerts import delivery, routing
from apps.alerts.models import Channel, Notification, Rule
from apps.lib.status import Status, Verdict
from tests.helpers import bearer
from tests.services.ses_proxy import sent_messages

pytestmark = pytest.mark.django_db


def to_line(raw: str) -> str:
    return email.message_from_string(raw)["To"]


CRITICAL = Verdict(Status.CRITICAL, "quorum lost")
SLACK_URL = "http://127.0.0.1:9/services/T0/B0/PLANTEDslackTOKEN"


def test_the_page_refuses_a_bad_address_in_words(logged_in_client):
    page = logged_in_client.post(
        "/alerts/channels/", {"name": "Ops", "kind": "email", "target": "ops@example.com, ops"}
    )
    assert page.status_code == 200
    assert "&#x27;ops&#x27; is not an email address" in page.content.decode()
    assert not Channel.objects.filter(name="Ops").exists()


def test_the_api_refuses_a_bad_address_and_a_refused_url_naming_the_rule(api_client, api_key):
    key = api_key(read_only=False)
    refused = api_client.post(
        "/api/alerts/channels/",
        {"name": "Ops", "kind": "email", "target": "not-an-address"},
        format="json",
        **bearer(key),
    )
    assert refused.status_code == 400
    assert "'not-an-address' is not an email address" in str(refused.json())
    metadata = api_client.post(
        "/api/alerts/channels/",
        {
            "name": "Hook",
            "kind": "webhook",
            "target": "http://169.254.169.254/",
            "secret": "x" * 20,
        },
        format="json",
        **bearer(key),
    )
    assert metadata.status_code == 400
    assert "the instance metadata service" in str(metadata.json())


def test_the_admin_refuses_a_bad_address(logged_in_client):
    response = logged_in_client.post(
        "/admin/alerts/channel/add/", {"name": "Ops", "kind": "email", "target": "@example.com"}
    )
    assert response.status_code == 200 and "is not an email address" in response.content.decode()
    assert not Channel.objects.filter(name="Ops").exists()


def test_a_secret_is_write_only_in_the_api_pages_and_audit_trail(
    api_client, api_key, logged_in_client
):
    key = api_key(read_only=False)
    created = api_client.post(
        "/api/alerts/channels/",
        {"name": "Slack", "kind": "slack", "secret": SLACK_URL},
        format="json",
        **bearer(key),
    )
    assert created.status_code == 201, created.json()
    body = created.json()
    assert "secret" not in body and body["has_secret"] is True
    channel = Channel.objects.get(name="Slack")
    renamed = api_client.patch(
        f"/api/alerts/channels/{channel.pk}/", {"name": "Slack ops"}, format="json", **bearer(key)
    )
    assert renamed.status_code == 200
    channel.refresh_from_db()
    assert channel.secret == SLACK_URL  # kept when not given
    for url in ("/alerts/channels/", f"/alerts/channels/{channel.pk}/", "/accounts/audit/",
                f"/admin/alerts/channel/{channel.pk}/change/", "/api/audit/",
                f"/api/alerts/channels/{channel.pk}/"):  # fmt: skip
        response = logged_in_client.get(url)
        assert response.status_code == 200, url
        assert "PLANTEDslackTOKEN" not in response.content.decode(), url
    # Editing on the page without typing the secret again keeps it.
    logged_in_client.post(
        f"/alerts/channels/{channel.pk}/", {"name": "Slack", "kind": "slack", "secret": ""}
    )
    channel.refresh_from_db()
    assert channel.name == "Slack" and channel.secret == SLACK_URL


def test_the_channel_page_lists_failures_and_operators_send_again(
    client, operator, viewer, gadget, oncall, ses_verified, aws
):
    Channel.objects.filter(pk=oncall.pk).update(target="oncall@example.com, bad@")
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    notification = Notification.objects.get()
    assert notification.refused and notification.state == "sent"
    client.force_login(viewer)
    page = client.get(f"/alerts/channels/{oncall.pk}/").content.decode()
    assert "Not delivered (1)" in page and "bad@" in page and "Send again" not in page
    resend = f"/alerts/channels/{oncall.pk}/resend/{notification.pk}/"
    assert client.post(resend).status_code == 403
    client.force_login(operator)
    assert "Send again" in client.get(f"/alerts/channels/{oncall.pk}/").content.decode()
    Channel.objects.filter(pk=oncall.pk).update(target="oncall@example.com, bad@example.com")
    assert client.post(resend).status_code == 302
    notification.refresh_from_db()
    assert notification.state == "pending" and notification.refused == {}
    delivery.send_due()
    assert [to_line(raw) for raw in sent_messages()] == [
        "oncall@example.com",
        "bad@example.com",
    ]


def test_the_api_sends_a_channels_failures_again(api_client, api_key, gadget, oncall, ses_verified):
    key = api_key(read_only=False)
    Channel.objects.filter(pk=oncall.pk).update(target="bad@")
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    assert Notification.objects.get().state == "failed"
    response = api_client.post(f"/api/alerts/channels/{oncall.pk}/resend/", **bearer(key))
    assert response.json() == {"resent": 1}
    assert Notification.objects.get().state == "pending"


def test_admins_see_a_banner_on_every_page_while_the_configuration_refuses(
    client, user, operator, oncall
):
    Channel.objects.filter(pk=oncall.pk).update(
        config_error="MessageRejected: Email address is not verified."
    )
    client.force_login(user)
    for url in ("/", "/alerts/", "/accounts/keys/"):
        page = client.get(url).content.decode()
        assert "Alerts are not being delivered" in page, url
        assert "Email address is not verified" in page
    client.force_login(operator)
    assert "Alerts are not being delivered" not in client.get("/").content.decode()


def test_the_daily_check_sends_what_nobody_received_by_another_channel(
    gadget, oncall, make_channel, receiver, ses_verified
):
    Channel.objects.filter(pk=oncall.pk).update(target="bad@")
    hook = make_channel("webhook", receiver.url, "s" * 20, name="Hook")
    rule = Rule.objects.create(name="only email")  # the alert itself goes to email only
    rule.channels.add(oncall)
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    assert Notification.objects.get(channel=oncall).state == "failed"
    assert routing.escalate_undeliverable(timezone.now()) == 0  # not late yet
    with time_machine.travel(timezone.now() + timedelta(hours=7)):
        assert routing.escalate_undeliverable(timezone.now()) == 1
        assert routing.escalate_undeliverable(timezone.now()) == 0  # once
        delivery.send_due()
    (request,) = receiver.requests
    (event,) = request.json["events"]
    assert event["kind"] == "undeliverable" and event["status"] == "critical"
    assert Notification.objects.get(channel=hook).state == "sent"


def test_an_undeliverable_email_names_the_channel_it_could_not_reach(
    gadget, oncall, ses_verified, aws
):
    stuck = Channel.objects.create(name="Pager", target="bad@")
    rule = Rule.objects.create(name="pager")
    rule.channels.add(stuck)
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    with time_machine.travel(timezone.now() + timedelta(hours=7)):
        routing.escalate_undeliverable(timezone.now())
        delivery.send_due()
    (raw,) = sent_messages()
    message = email.message_from_string(raw)
    assert message["To"] == "oncall@example.com"
    assert message["Subject"] == "UNDELIVERED to Pager: CRITICAL lab Gadgets gadget g1"
    text = message.get_payload()[0].get_payload(decode=True).decode()
    assert "Vigil could not deliver this alert to Pager." in text


def test_the_channel_form_says_what_is_wrong_while_typing(logged_in_client):
    response = logged_in_client.post(
        "/alerts/channels/",
        {"_check": "1", "name": "", "kind": "webhook", "target": "ftp://x", "secret": ""},
        headers={"HX-Request": "true", "HX-Trigger-Name": "target"},
    )
    html = response.content.decode()
    assert 'id="id_target-live-errors"' in html and 'hx-swap-oob="true"' in html
    assert "must start with https://" in html
    assert "This field is required" not in html  # the name is not reached yet
    assert not Channel.objects.exists() or not Channel.objects.filter(kind="webhook").exists()


def test_the_rule_form_says_a_rule_without_channels_sends_nothing(logged_in_client):
    response = logged_in_client.post(
        "/alerts/rules/new/",
        {"_check": "1", "name": "db", "min_severity": "warning", "enabled": "on"},
        headers={"HX-Request": "true", "HX-Trigger-Name": "channels"},  # unticked the last
    )
    assert "an enabled rule without one sends nothing" in response.content.decode()
    assert not Rule.objects.filter(name="db").exists()


def test_send_a_test_goes_through_the_channel_now_and_writes_nothing(
    logged_in_client, make_channel, receiver
):
    import hashlib
    import hmac

    secret = "s" * 32
    channel = make_channel("webhook", f"{receiver.url}/hook", secret, name="Ops hook")
    page = logged_in_client.get(f"/alerts/channels/{channel.pk}/").content.decode()
    assert "Send a test</button>" in page

    answer = logged_in_client.post(f"/alerts/channels/{channel.pk}/test/", follow=True)

    assert "The test message was delivered." in answer.content.decode()
    (request,) = receiver.requests
    signed = hmac.new(secret.encode(), request.body, hashlib.sha256).hexdigest()
    assert request.headers["X-Vigil-Signature"] == f"sha256={signed}"
    (event,) = request.json["events"]
    assert event["kind"] == "test" and event["word"] == "TEST"
    assert event["summary"] == (
        "TEST Vigil channel Ops hook: a test message sent by oncall, nothing changed"
    )
    assert event["subject"]["url"].endswith(f"/alerts/channels/{channel.pk}/")
    assert not Notification.objects.exists()
    channel.refresh_from_db()
    assert channel.last_success is None and channel.last_error == ""


def test_send_a_test_says_what_the_receiver_answered(logged_in_client, make_channel, receiver):
    channel = make_channel("webhook", receiver.url, "s" * 32)
    receiver.answers = [404]
    answer = logged_in_client.post(f"/alerts/channels/{channel.pk}/test/", follow=True)
    assert "The test message was not delivered: The webhook answered 404" in (
        answer.content.decode()
    )


def test_send_a_test_emails_every_address_of_the_channel(logged_in_client, make_channel):
    from django.core import mail

    channel = make_channel("email", "a@example.com, b@example.com", name="On call")
    logged_in_client.post(f"/alerts/channels/{channel.pk}/test/")
    assert [m.to for m in mail.outbox] == [["a@example.com"], ["b@example.com"]]
    assert mail.outbox[0].subject == (
        "TEST Vigil channel On call: a test message sent by oncall, nothing changed"
    )
    assert "if you read this, it works" in mail.outbox[0].body


TEAMS_URL = "https://outlook.office.com/webhook/PLANTED-team-guid/IncomingWebhook/PLANTEDkey"
TEAMS_SHOWN = "https://outlook.office.com/…"


def test_a_webhook_url_is_shown_by_its_scheme_and_host_only(
    client, viewer, api_client, api_key, admin, settings
):
    """Teams, Discord and Google Chat webhooks carry their credential in the path or query."""
    settings.VIGIL_OUTBOUND_ALLOW_LOOPBACK = True
    writer = bearer(api_key(read_only=False))
    made = api_client.post(
        "/api/alerts/channels/",
        {"name": "Teams", "kind": "webhook", "target": TEAMS_URL, "secret": "s" * 20},
        format="json",
        **writer,
    )
    assert made.status_code == 201, made.content
    assert made.json()["target"] == TEAMS_SHOWN
    channel = Channel.objects.get(name="Teams")
    assert channel.target == TEAMS_URL  # kept whole, and sent to

    # the API's GET sent back in a PUT keeps the URL; a whole new one replaces it
    shown = api_client.get(f"/api/alerts/channels/{channel.pk}/", **writer).json()
    put = {k: shown[k] for k in ("name", "kind", "target", "disabled")}
    assert (
        api_client.put(
            f"/api/alerts/channels/{channel.pk}/", put, format="json", **writer
        ).status_code
        == 200
    )
    channel.refresh_from_db()
    assert channel.target == TEAMS_URL
    other = "https://discord.com/api/webhooks/123/PLANTED-discord-token?wait=true"
    api_client.patch(
        f"/api/alerts/channels/{channel.pk}/", {"target": other}, format="json", **writer
    )
    channel.refresh_from_db()
    assert channel.target == other

    client.force_login(viewer)
    pages = [
        client.get(url).content.decode()
        for url in ("/alerts/channels/", f"/alerts/channels/{channel.pk}/")
    ]
    listed = client.get("/api/alerts/channels/").content.decode()
    client.force_login(admin)
    edit_page = client.get(f"/alerts/channels/{channel.pk}/").content.decode()
    admin_pages = [
        client.get(url).content.decode()
        for url in ("/admin/alerts/channel/", f"/admin/alerts/channel/{channel.pk}/change/")
    ]
    trail = client.get("/api/audit/?model=alerts.channel").content.decode()
    trail_page = client.get("/accounts/audit/?model=alerts.channel").content.decode()
    for answer in (*pages, listed, edit_page, *admin_pages, trail, trail_page):
        assert "PLANTED" not in answer
    assert "https://discord.com/…" in pages[1] and "https://discord.com/…" in listed
    assert "https://outlook.office.com/…" in trail and "https://discord.com/…" in trail

    # the edit page's form sends the shown URL back: the saved one is kept
    saved = client.post(
        f"/alerts/channels/{channel.pk}/",
        {"name": "Teams", "kind": "webhook", "target": "https://discord.com/…", "secret": ""},
    )
    assert saved.status_code == 302, saved.content.decode()[:2000]
    channel.refresh_from_db()
    assert channel.target == other

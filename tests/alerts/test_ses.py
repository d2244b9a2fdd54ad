"""Alert email through Amazon SES's API, against a moto server behind a fault proxy."""

from __future__ import annotations

import json
import urllib.request
from datetime import timedelta

import boto3
import pytest
import time_machine
from django.utils import timezone

from apps import alerts
from apps.alerts import delivery
from apps.alerts.models import Notification
from apps.lib.status import Status, Verdict

from .ses_proxy import SesFaultProxy

pytestmark = pytest.mark.django_db

SENDER = "vigil@example.com"
CRITICAL = Verdict(Status.CRITICAL, "burst credits exhausted", {"credits_bytes": 0})


@pytest.fixture
def ses(aws, settings):
    """Django's mail API sends through anymail's SES backend to moto, via the fault proxy."""
    proxy = SesFaultProxy(aws)
    settings.EMAIL_BACKEND = "anymail.backends.amazon_ses.EmailBackend"
    settings.DEFAULT_FROM_EMAIL = SENDER
    settings.ANYMAIL = {
        "AMAZON_SES_CLIENT_PARAMS": {
            "endpoint_url": proxy.url,
            "region_name": "us-east-1",
            "config": {"retries": {"total_max_attempts": 1}},
        }
    }
    yield proxy
    proxy.close()


def verify_sender(endpoint: str) -> None:
    boto3.client("sesv2", "us-east-1", endpoint_url=endpoint).create_email_identity(
        EmailIdentity=SENDER
    )


def sent_messages(endpoint: str) -> list[str]:
    with urllib.request.urlopen(f"{endpoint}/moto-api/data.json", timeout=10) as response:
        data = json.load(response)
    return [m["raw_data"] for m in data["ses"]["RawMessage"]]


def test_it_sends_through_the_ses_api(ses, aws, gadget, oncall):
    verify_sender(aws)
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    (raw,) = sent_messages(aws)
    assert "Subject: CRITICAL lab Gadgets gadget g1: burst credits exhausted" in raw
    assert "oncall@example.com" in raw
    notification = Notification.objects.get()
    assert notification.state == "sent" and notification.message_id


@pytest.mark.parametrize("fault", ["throttle", "error500"])
def test_it_retries_throttling_and_server_errors_and_sends_once(ses, aws, gadget, oncall, fault):
    verify_sender(aws)
    ses.faults = [fault, fault]
    alerts.record(gadget, CRITICAL)
    now = timezone.now()
    for minutes in (0, 1, 2):
        with time_machine.travel(now + timedelta(minutes=minutes)):
            delivery.send_due()
    assert len(sent_messages(aws)) == 1
    notification = Notification.objects.get()
    assert notification.state == "sent" and notification.attempts == 3
    oncall.refresh_from_db()
    assert oncall.last_error  # the failures are visible on the channel


def test_it_stops_at_a_rejected_message_and_shows_it_on_the_channel(ses, aws, gadget, oncall):
    alerts.record(gadget, CRITICAL)  # the sender identity is not verified: SES rejects it
    delivery.send_due()
    with time_machine.travel(timezone.now() + timedelta(hours=1)):
        delivery.send_due()
    assert sent_messages(aws) == [] and ses.sends_seen == 1
    notification = Notification.objects.get()
    assert notification.state == "failed" and notification.attempts == 1
    oncall.refresh_from_db()
    assert oncall.last_error.startswith("MessageRejected: Did not have authority to send")

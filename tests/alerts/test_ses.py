"""Alert email through Amazon SES's API, against a moto server behind a fault proxy."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from apps import alerts
from apps.alerts import delivery
from apps.alerts.models import Channel, Notification
from apps.lib.status import Status, Verdict
from tests.services.ses_proxy import sent_messages, verify_sender

pytestmark = pytest.mark.django_db

CRITICAL = Verdict(Status.CRITICAL, "burst credits exhausted", {"credits_bytes": 0})


def test_it_sends_through_the_ses_api(ses, aws, gadget, oncall):
    verify_sender(aws)
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    (raw,) = sent_messages()
    assert "Subject: CRITICAL lab Gadgets gadget g1: burst credits exhausted" in raw
    assert "oncall@example.com" in raw
    notification = Notification.objects.get()
    assert notification.state == "sent" and notification.message_id


def test_each_connection_builds_its_client_from_botocores_models_read_once(ses):
    """Production's backend opens a client for every connection; anymail's own made a loader
    for each, which read SES's model and the endpoint rules again (about 100 ms of CPU)."""
    from anymail.backends.amazon_ses import EmailBackend as AnymailBackend
    from django.core.mail import get_connection

    def model(connection) -> object:
        connection.open()
        try:
            return connection.client.meta.service_model._service_description
        finally:
            connection.close()

    assert model(get_connection()) is model(get_connection())
    assert model(AnymailBackend()) is not model(AnymailBackend())  # what the backend avoids


@pytest.mark.parametrize("fault", ["throttle", "error500"])
def test_it_retries_throttling_and_server_errors_and_sends_once(ses, aws, gadget, oncall, fault):
    verify_sender(aws)
    ses.faults = [fault, fault]
    alerts.record(gadget, CRITICAL)
    now = timezone.now()
    for minutes in (0, 1, 2):
        with time_machine.travel(now + timedelta(minutes=minutes)):
            delivery.send_due()
    assert len(sent_messages()) == 1
    notification = Notification.objects.get()
    assert notification.state == "sent" and notification.attempts == 3
    oncall.refresh_from_db()
    assert oncall.last_error  # the failures are visible on the channel


def test_a_rejection_caused_by_vigils_configuration_is_retried_and_sent_once_fixed(
    ses, aws, gadget, oncall
):
    Channel.objects.filter(pk=oncall.pk).update(target="oncall@example.com, lead@example.com")
    alerts.record(gadget, CRITICAL)  # the sender identity is not verified: SES rejects it
    delivery.send_due()
    assert ses.sends_seen == 1  # the second recipient would be refused alike: not asked
    notification = Notification.objects.get()
    assert notification.state == "pending" and notification.failure == "configuration"
    oncall.refresh_from_db()
    assert oncall.config_error.startswith("MessageRejected: Did not have authority to send")
    verify_sender(aws)  # an admin fixes it
    with time_machine.travel(timezone.now() + timedelta(minutes=1)):
        delivery.send_due()
    assert len(sent_messages()) == 2 and ses.sends_seen == 3
    notification.refresh_from_db()
    assert notification.state == "sent" and notification.attempts == 2
    oncall.refresh_from_db()
    assert oncall.config_error == ""  # the banner goes with it


@pytest.mark.parametrize(
    ("bad", "fault", "why"),
    [
        # anymail refuses it before SES is asked
        ("nobody@", "", "nobody@: Invalid email address '' in `to` parsed from 'nobody@'"),
        # SES refuses it
        ("nobody@invalid", "illegal", "nobody@invalid: BadRequestException: Illegal address"),
    ],
)
def test_one_bad_address_fails_alone(ses, aws, gadget, oncall, bad, fault, why):
    verify_sender(aws)
    # Saved before addresses were validated: only this recipient is refused.
    Channel.objects.filter(pk=oncall.pk).update(target=f"oncall@example.com, {bad}")
    ses.faults = ["", fault]
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    with time_machine.travel(timezone.now() + timedelta(hours=1)):
        delivery.send_due()
    (raw,) = sent_messages()
    assert "To: oncall@example.com" in raw
    notification = Notification.objects.get()
    assert notification.state == "sent" and notification.delivered == ["oncall@example.com"]
    assert notification.refused == {bad: why}
    assert ses.sends_seen == (2 if fault else 1)  # the bad address is not retried
    oncall.refresh_from_db()
    assert list(oncall.failed_notifications()) == [notification]


def test_a_retry_skips_the_recipients_who_already_have_it(ses, aws, gadget, oncall):
    verify_sender(aws)
    Channel.objects.filter(pk=oncall.pk).update(target="a@example.com, b@example.com")
    ses.faults = ["", "throttle"]  # a@ gets it, b@ is throttled
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    assert Notification.objects.get().delivered == ["a@example.com"]
    with time_machine.travel(timezone.now() + timedelta(minutes=1)):
        delivery.send_due()
    raws = sent_messages()
    assert len(raws) == 2 and "To: b@example.com" in raws[1]
    assert Notification.objects.get().state == "sent"

"""No alert lost, none sent twice, when a real worker dies or Redis restarts mid-burst."""

from __future__ import annotations

import email
import time

import pytest
from celery import Celery
from django.db import transaction

from apps import alerts
from apps.alerts.models import Channel, Notification
from apps.lib.status import Status, Verdict
from tests.services import wait_for
from tests.services.ses_proxy import SesFaultProxy, sent_messages, verify_sender
from tests.services.workers import Worker, publishing_to, worker_env

pytestmark = pytest.mark.django_db(transaction=True)

LEASE_SECONDS = 3


@pytest.fixture
def ses_proxy(aws):
    verify_sender(aws)
    proxy = SesFaultProxy(aws)
    yield proxy
    proxy.close()


@pytest.fixture
def start_worker(redis, ses_proxy, tmp_path):
    env = worker_env(redis.url, ses_proxy.url, VIGIL_ALERT_LEASE_SECONDS=str(LEASE_SECONDS))
    workers = []

    def start(**settings: str) -> Worker:
        worker = Worker({**env, **settings}, tmp_path / f"worker{len(workers)}.log")
        workers.append(worker)
        worker.start()
        return worker

    yield start
    for worker in workers:
        worker.stop()


def sweep(broker: Celery) -> None:
    broker.send_task("apps.alerts.tasks.sweep", queue="alerts")


def sweep_until(broker: Celery, predicate, what: str, timeout: float = 90) -> None:
    """Wake the worker as beat's sweep would, once a second, until ``predicate()`` holds."""

    def swept() -> bool:
        sweep(broker)
        return predicate()

    wait_for(swept, timeout, what, interval=1.0)


def decoded_bodies(raw_messages: list[str]) -> list[str]:
    """The bodies moto kept (it keeps the HTML part), decoded from quoted-printable."""
    out = []
    for raw in raw_messages:
        for part in email.message_from_string(raw).walk():
            if not part.is_multipart():
                out.append(part.get_payload(decode=True).decode())
    return out


def test_a_worker_killed_after_claiming_leaves_the_alert_to_the_next_one(
    start_worker, broker, ses_proxy, aws, gadget, oncall
):
    ses_proxy.faults = ["hang"]  # the first send never reaches SES
    first = start_worker()
    alerts.record(gadget, Verdict(Status.CRITICAL, "array md3 degraded"))
    sweep(broker)
    wait_for(lambda: ses_proxy.sends_seen == 1, 60, "the worker to call SES")
    first.kill()

    notification = Notification.objects.get()
    assert notification.state == "pending" and notification.attempts == 1
    assert notification.lease_until is not None  # claimed by the dead worker

    start_worker()
    sweep_until(
        broker,
        lambda: Notification.objects.get().state == "sent",
        "the second worker to deliver after the lease",
    )
    (raw,) = sent_messages()
    # The worker runs without the test-only concern app: its label falls back to the key.
    assert "Subject: CRITICAL lab GADGETS gadget g1: array md3 degraded" in raw
    assert Notification.objects.get().attempts == 2


def test_every_transition_of_a_burst_is_delivered_once_across_a_redis_restart(
    start_worker, broker, redis, aws, make_gadgets, oncall
):
    start_worker()
    gadgets = make_gadgets(30)
    with publishing_to(redis, task_publish_retry=False):
        for i, gadget in enumerate(gadgets):
            if i == 10:
                redis.stop()  # the wake-ups of transitions 10..19 go nowhere
            if i == 20:
                redis.start()
            alerts.record(gadget, Verdict(Status.CRITICAL, f"burst {i}"))

    sweep_until(
        broker,
        lambda: not Notification.objects.exclude(state="sent").exists(),
        "every notification to be sent",
    )
    assert Notification.objects.filter(state="sent").count() == 30
    bodies = "".join(decoded_bodies(sent_messages()))
    for i in range(30):
        assert bodies.count(f">burst {i}<") == 1, f"transition {i} not delivered exactly once"


def test_a_worker_retries_ses_throttling_and_sends_once(
    start_worker, broker, ses_proxy, aws, gadget, oncall
):
    ses_proxy.faults = ["throttle"] * 4  # two calls of two tries each are throttled
    start_worker()
    alerts.record(gadget, Verdict(Status.CRITICAL, "throttled at first"))
    sweep_until(
        broker, lambda: Notification.objects.get().state == "sent", "delivery after throttling"
    )
    assert len(sent_messages()) == 1
    notification = Notification.objects.get()
    assert notification.attempts == 3
    oncall.refresh_from_db()
    assert oncall.last_error.startswith("TooManyRequestsException")


def test_a_worker_stops_at_an_address_ses_refuses_and_shows_it_on_the_channel(
    start_worker, broker, ses_proxy, aws, gadget, oncall
):
    ses_proxy.faults = ["illegal"]  # 400 BadRequestException: Illegal address
    start_worker()
    alerts.record(gadget, Verdict(Status.CRITICAL, "rejected"))
    sweep_until(
        broker, lambda: Notification.objects.get().state == "failed", "the refusal recorded"
    )
    sweep(broker)
    sweep(broker)
    time.sleep(2)  # give the worker the chance to (wrongly) try again
    assert ses_proxy.sends_seen == 1 and sent_messages() == []
    oncall.refresh_from_db()
    assert "BadRequestException: Illegal address" in oncall.last_error


def test_a_worker_retries_a_rejection_caused_by_vigils_configuration_until_it_goes_through(
    start_worker, broker, ses_proxy, aws, gadget, oncall
):
    ses_proxy.faults = ["reject"]  # MessageRejected: the sender, say, is not verified yet
    start_worker()
    alerts.record(gadget, Verdict(Status.CRITICAL, "rejected, then fixed"))
    sweep_until(
        broker,
        lambda: Channel.objects.get(pk=oncall.pk).config_error != "",
        "the configuration error shown",
    )
    assert Notification.objects.get().state == "pending"
    # Fixed (the proxy now passes sends on): the retry after the backoff goes through.
    sweep_until(broker, lambda: Notification.objects.get().state == "sent", "the retry sent")
    assert ses_proxy.sends_seen == 2 and len(sent_messages()) == 1
    assert Channel.objects.get(pk=oncall.pk).config_error == ""


def test_a_flapping_storm_arrives_as_a_few_emails_and_held_ones_need_no_sweep(
    start_worker, redis, aws, make_gadgets, oncall
):
    start_worker(VIGIL_ALERT_HOLD_SECONDS="1", VIGIL_ALERT_REPEAT_HOLD_SECONDS="5")
    gadgets = make_gadgets(20)
    with publishing_to(redis):
        # The storm arrives at once, as a collection cycle's changes do: recorded one by one and
        # committed each, its 160 changes took longer than the holds on a loaded machine, and
        # the worker sent them in more emails as they came (6).
        with transaction.atomic():
            for k in range(8):  # 160 changes: 5 each are sent, the 6th is summarised
                verdict = Verdict(Status.CRITICAL if k % 2 == 0 else Status.OK, f"storm {k}")
                for gadget in gadgets:
                    alerts.record(gadget, verdict)
        # No sweep: the worker wakes itself when a held region may be sent again.
        wait_for(
            lambda: not Notification.objects.filter(state="pending").exists(),
            60,
            "the storm to be delivered",
        )

    assert Notification.objects.filter(state="sent").count() == 20 * 6
    emails = sent_messages()
    # News goes out within a second; the same subjects changing again wait 5 s: the first
    # email, the rest of the subjects, their further changes, the flap summary.
    assert 2 <= len(emails) <= 5, len(emails)
    assert any("Subject: 20 flapping in lab" in raw for raw in emails)

"""Redis (the broker) stopped and started while a worker collects: the cycle finishes, its
transitions are written although their wake-ups cannot be queued, the worker reconnects,
and the sweep delivers every alert once.

tests/alerts/test_worker_faults.py covers a burst of transitions recorded by this process
across a Redis restart; this test is the collection's side of it, end to end.
"""

from __future__ import annotations

import pytest

from apps.alerts.models import Notification
from tests.services import wait_for

from .fleet import (
    assert_converged,
    collected_then_unknown,
    deliver_all,
    start_slow_cycle,
    statuses,
)

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]


def test_a_redis_restart_mid_cycle_delays_alerts_but_loses_none(
    start_worker, broker, redis, cloudwatch, responder, aws
):
    worker = start_worker()
    # Collected, then an outage of 20 minutes while CloudWatch refused: the subjects are unknown.
    rc, cut = collected_then_unknown(aws, broker, cloudwatch)
    sent_before = Notification.objects.filter(state=Notification.State.SENT).count()

    # Redis goes away while the recovering cycle waits for CloudWatch.
    start_slow_cycle(broker, rc, responder)
    redis.stop()
    responder.faults.latency_s = 0.0

    # The cycle finishes without a broker: minutes saved, statuses recovered, transitions
    # and their outbox rows written; only the wake-up of the sender could not be queued.
    wait_for(lambda: "unknown" not in statuses().values(), 30, "the cycle to finish without Redis")
    wait_for(lambda: "Could not queue send_alerts" in worker.output(), 30, "the failed wake-up")
    # the statuses change subject by subject; the outbox is whole once the cycle lets go of
    # its lease
    wait_for(
        lambda: not type(rc).objects.filter(pk=rc.pk, lease_until__isnull=False).exists(),
        30,
        "the cycle to release its lease",
    )
    # the recoveries owed where a channel was told of a subject alone (an account-region's
    # failure is one cause: its other subjects were held, not told); how many is the oracle's
    # business in assert_converged, this test needs only that some wait for Redis
    owed = Notification.objects.filter(state=Notification.State.PENDING).count()
    assert owed >= 1

    redis.start()
    wait_for(
        lambda: worker.output().count("Connected to redis://") >= 2,
        60,
        "the worker to reconnect to Redis",
    )
    deliver_all(broker)  # beat's sweep, every 30 s in production

    assert Notification.objects.filter(state=Notification.State.SENT).count() == sent_before + owed
    assert_converged(rc, aws, since=cut)

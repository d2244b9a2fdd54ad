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
from tests.services.workers import worker_database_url

from .fleet import (
    assert_converged,
    create_fleet,
    create_region,
    deliver_all,
    run_cycle,
    start_slow_cycle,
    statuses,
    unknown_after_outage,
)

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]


def test_a_redis_restart_mid_cycle_delays_alerts_but_loses_none(
    start_worker, broker, redis, cloudwatch, responder, aws
):
    create_fleet(aws)
    rc = create_region()
    worker = start_worker(worker_database_url())
    run_cycle(broker, rc)
    deliver_all(broker)

    # An outage of 20 minutes while CloudWatch refused: the subjects are unknown.
    cut = unknown_after_outage(broker, rc, cloudwatch)
    sent_before = Notification.objects.filter(state=Notification.State.SENT).count()

    # Redis goes away while the recovering cycle waits for CloudWatch.
    start_slow_cycle(broker, rc, responder)
    redis.stop()
    responder.faults.latency_s = 0.0

    # The cycle finishes without a broker: minutes saved, statuses recovered, transitions
    # and their outbox rows written; only the wake-up of the sender could not be queued.
    wait_for(lambda: "unknown" not in statuses().values(), 30, "the cycle to finish without Redis")
    wait_for(lambda: "Could not queue send_alerts" in worker.output(), 30, "the failed wake-up")
    assert Notification.objects.filter(state=Notification.State.PENDING).count() == 3

    redis.start()
    wait_for(
        lambda: worker.output().count("Connected to redis://") >= 2,
        60,
        "the worker to reconnect to Redis",
    )
    deliver_all(broker)  # beat's sweep, every 30 s in production

    assert Notification.objects.filter(state=Notification.State.SENT).count() == sent_before + 3
    assert_converged(rc, aws, since=cut)

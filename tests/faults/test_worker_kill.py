"""A Celery worker SIGKILLed in the middle of an EFS collection: the dead task's lease runs
out, the work is claimed again, and nothing is lost or sent twice.

Killing the pool process alone is what ``acks_late`` + ``reject_on_worker_lost`` are for: the
parent sees the job lost and puts the message back, and it is delivered again at once.
Killing the whole worker (its process group) leaves the message unacknowledged in Redis
until the visibility timeout; either way the region's lease (as long as the task time limit)
keeps a second collection from running while the first might, and the next tick takes the
region again once it has expired.
"""

from __future__ import annotations

import re

import pytest
from django.utils import timezone

from apps.efs.models import RegionCollection
from tests.services import wait_for

from .conftest import TASK_TIME_LIMIT_S
from .fleet import (
    assert_converged,
    collected_then_unknown,
    deliver_all,
    run_cycle,
    start_slow_cycle,
    statuses,
)

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]


def lease_expired(rc: RegionCollection) -> bool:
    rc.refresh_from_db()
    return rc.lease_until is None or rc.lease_until < timezone.now()


@pytest.mark.parametrize("kill", ["pool process", "whole worker"])
def test_a_worker_killed_mid_collection_loses_no_minute_transition_or_email(
    kill, start_worker, broker, cloudwatch, responder, aws
):
    worker = start_worker()
    # Collected, then an outage of 20 minutes while CloudWatch refused: the subjects are unknown.
    rc, cut = collected_then_unknown(aws, broker, cloudwatch)

    # The cycle that would recover them dies while CloudWatch answers.
    start_slow_cycle(broker, rc, responder)
    if kill == "pool process":
        worker.kill_pool()
        # reject_on_worker_lost: the parent puts the message back and it comes again at once.
        received = r"Task apps\.efs\.tasks\.collect_region\[([0-9a-f-]+)\] received"
        wait_for(
            lambda: len(set(ids := re.findall(received, worker.output()))) < len(ids),
            30,
            "the lost task to be delivered again",
        )
    else:
        worker.kill()
        start_worker()
    responder.faults.latency_s = 0.0
    assert set(statuses().values()) == {"unknown"}  # nothing half-written
    rc.refresh_from_db()
    assert rc.lease_until is not None  # the dead task's lease: no second collection yet

    wait_for(lambda: lease_expired(rc), TASK_TIME_LIMIT_S + 10, "the dead task's lease to end")
    run_cycle(broker, rc)  # the next tick claims the region again
    deliver_all(broker)

    rc.refresh_from_db()
    assert rc.last_error == ""
    assert_converged(rc, aws, since=cut)

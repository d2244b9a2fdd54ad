"""Fixtures of the fault suite: the EFS fleet stand-in behind a throttling proxy, real Celery
workers on a private Redis (``redis`` and ``broker`` are in tests/plugins/services.py,
``responder`` in tests/plugins/aws.py), and the account, region and on-call channel they report to."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from apps.lib import aws as aws_lib
from tests.services.faults import CloudWatchProxy, FaultWorker
from tests.services.ses_proxy import verify_sender
from tests.services.workers import worker_env

#: Worker settings: alerts sent at once with a short lease, and a task time limit (so an EFS
#: collection's lease, apps.efs.tasks._lease_ttl) of seconds, not minutes.
TASK_TIME_LIMIT_S = 10
WORKER_SETTINGS = {
    "VIGIL_ALERT_LEASE_SECONDS": "3",
    "VIGIL_ALERT_HOLD_SECONDS": "0",
    "VIGIL_ALERT_REPEAT_HOLD_SECONDS": "0",
    "CELERY_TASK_TIME_LIMIT": str(TASK_TIME_LIMIT_S),
    "CELERY_TASK_SOFT_TIME_LIMIT": str(TASK_TIME_LIMIT_S - 2),
    "AWS_MAX_ATTEMPTS": "2",
}


@pytest.fixture
def cloudwatch(aws, responder, settings) -> Iterator[CloudWatchProxy]:
    """Every AWS call of Vigil (this process and the workers) goes through the proxy."""
    proxy = CloudWatchProxy(aws)
    settings.AWS_ENDPOINT_URL = proxy.url
    aws_lib.clear_cache()
    verify_sender(aws)
    yield proxy
    proxy.close()
    aws_lib.clear_cache()


@pytest.fixture
def start_worker(redis, cloudwatch, tmp_path):
    """``start_worker(database_url=None)``: a worker on every queue an EFS cycle needs, on the
    test database unless told."""
    workers: list[FaultWorker] = []

    def start(database_url: str | None = None, **settings: str) -> FaultWorker:
        env = worker_env(redis.url, cloudwatch.url, database_url, **{**WORKER_SETTINGS, **settings})
        worker = FaultWorker(env, tmp_path / f"worker{len(workers)}.log", "efs,alerts,default")
        workers.append(worker)
        worker.start()
        return worker

    yield start
    for worker in workers:
        worker.kill()  # nothing to finish: the test has checked what it needed

"""Fixtures of the fault suite: the EFS fleet stand-in behind a throttling proxy, a private
Redis, real Celery workers, and the account, region and on-call channel they report to."""

from __future__ import annotations

import os
from collections.abc import Iterator

import boto3
import pytest
from celery import Celery

from apps.efs import standin
from apps.efs.standin import FleetResponder
from apps.lib import aws as aws_lib
from tests.services.faults import CloudWatchProxy, FaultWorker
from tests.services.workers import RedisServer

SENDER = "vigil@example.com"
#: Worker settings: alerts sent at once with a short lease, and a task time limit (so an EFS
#: collection's lease, apps.efs.tasks._lease_ttl) of seconds, not minutes.
TASK_TIME_LIMIT_S = 10
WORKER_SETTINGS = {
    "DJANGO_SETTINGS_MODULE": "config.settings.base",
    "EMAIL_BACKEND": "anymail.backends.amazon_ses.EmailBackend",
    "DEFAULT_FROM_EMAIL": SENDER,
    "VIGIL_DEMO": "false",
    "VIGIL_ALERT_LEASE_SECONDS": "3",
    "VIGIL_ALERT_HOLD_SECONDS": "0",
    "VIGIL_ALERT_REPEAT_HOLD_SECONDS": "0",
    "CELERY_TASK_TIME_LIMIT": str(TASK_TIME_LIMIT_S),
    "CELERY_TASK_SOFT_TIME_LIMIT": str(TASK_TIME_LIMIT_S - 2),
    "AWS_MAX_ATTEMPTS": "2",
}


@pytest.fixture
def responder(aws) -> Iterator[FleetResponder]:
    """moto's GetMetricData answered from the synthetic fleet (apps/efs/standin.py)."""
    installed = standin.install(FleetResponder())
    try:
        yield installed
    finally:
        standin.uninstall()


@pytest.fixture
def cloudwatch(aws, responder, settings) -> Iterator[CloudWatchProxy]:
    """Every AWS call of Vigil (this process and the workers) goes through the proxy."""
    proxy = CloudWatchProxy(aws)
    settings.AWS_ENDPOINT_URL = proxy.url
    aws_lib.clear_cache()
    boto3.client("sesv2", "us-east-1", endpoint_url=aws).create_email_identity(EmailIdentity=SENDER)
    yield proxy
    proxy.close()
    aws_lib.clear_cache()


@pytest.fixture
def redis(tmp_path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def broker(redis) -> Iterator[Celery]:
    """A Celery client on the private Redis: the test publishes what beat would."""
    client = Celery("faults", broker=redis.url, set_as_current=False)
    yield client
    client.close()


@pytest.fixture
def start_worker(redis, cloudwatch, tmp_path):
    """``start_worker(database_url)``: a worker on every queue an EFS cycle needs."""
    workers: list[FaultWorker] = []

    def start(database_url: str, **settings: str) -> FaultWorker:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "VIGIL_"))}
        env.update(WORKER_SETTINGS)
        env.update(
            DATABASE_URL=database_url,
            CELERY_BROKER_URL=redis.url,
            AWS_ENDPOINT_URL=cloudwatch.url,
            **settings,
        )
        worker = FaultWorker(env, tmp_path / f"worker{len(workers)}.log", "efs,alerts,default")
        workers.append(worker)
        worker.start()
        return worker

    yield start
    for worker in workers:
        worker.kill()  # nothing to finish: the test has checked what it needed

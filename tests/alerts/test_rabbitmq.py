"""RabbitMQ as the broker: docs/production.md says Redis or RabbitMQ, so a real worker proves it.

The test uses the machine's RabbitMQ (starting it if it is installed but stopped) in a virtual
host of its own, so that nothing else on the broker sees its queues.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from apps import alerts
from apps.alerts.models import Notification
from apps.lib.status import Status, Verdict
from tests.services import wait_for
from tests.services.ses_proxy import sent_messages, verify_sender
from tests.services.workers import Worker, publishing_to, worker_env

pytestmark = pytest.mark.django_db(transaction=True)

RABBITMQ = ("127.0.0.1", 5672)


def rabbitmqctl(*args: str) -> None:
    subprocess.run(["rabbitmqctl", "-q", *args], check=True, capture_output=True, timeout=60)


def answers() -> bool:
    try:
        socket.create_connection(RABBITMQ, timeout=0.5).close()
        return True
    except OSError:
        return False


@dataclass(frozen=True)
class Broker:
    url: str


@pytest.fixture
def rabbitmq() -> Iterator[Broker]:
    assert shutil.which("rabbitmq-server"), "rabbitmq-server is missing: run make system-deps"
    if not answers():
        subprocess.run(["rabbitmq-server", "-detached"], check=True, timeout=60)
        wait_for(answers, 90, "RabbitMQ to accept connections", interval=0.5)
    vhost = f"vigil-test-{uuid.uuid4().hex[:8]}"
    rabbitmqctl("add_vhost", vhost)
    rabbitmqctl("set_permissions", "-p", vhost, "guest", ".*", ".*", ".*")
    yield Broker(f"amqp://guest:guest@127.0.0.1:5672/{vhost}")
    rabbitmqctl("delete_vhost", vhost)


def test_it_delivers_alerts_through_a_worker_on_rabbitmq(rabbitmq, aws, gadget, oncall, tmp_path):
    verify_sender(aws)
    worker = Worker(worker_env(rabbitmq.url, aws), tmp_path / "worker.log")
    worker.start()
    try:
        # No sweep: the transition's own wake-up travels through RabbitMQ to the worker.
        with publishing_to(rabbitmq):
            alerts.record(gadget, Verdict(Status.CRITICAL, "sent over amqp"))
        wait_for(
            lambda: Notification.objects.filter(state="sent").exists(),
            60,
            "the worker to deliver the alert it heard of through RabbitMQ",
        )
    finally:
        worker.stop()
    (raw,) = sent_messages()
    assert "sent over amqp" in raw

"""Real processes for the alert fault tests: a Redis server and Celery workers, on loopback."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.db import connection

from config import celery_app
from tests.helpers import ROOT
from tests.services import free_port, vigil_env, wait_for
from tests.services.ses_proxy import SENDER


class RedisServer:
    """Our own redis-server on a free port, so stopping it disturbs nobody else."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.process = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(self._answers, 10, "redis-server to answer")

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


class CeleryProcess:
    """``celery -A config <arguments>`` in its own process group, logging to ``log``; started
    once the log says it is ready."""

    what = "the Celery process"
    ready_line = ""
    start_timeout_s = 60

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env = env
        self.log = log
        self.process: subprocess.Popen | None = None

    def arguments(self) -> list[str]:
        raise NotImplementedError

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", *self.arguments()],
            cwd=ROOT,
            env=self.env,
            stdout=self.log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        wait_for(self._ready, self.start_timeout_s, f"{self.what} to start")

    def _ready(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"{self.what} exited:\n{self.log.read_text()[-3000:]}")
        return self.ready_line in self.log.read_text()

    def stop(self) -> None:
        stop_group(self.process)


class Worker(CeleryProcess):
    """``celery -A config worker`` on ``queues``, one pool process, killed for real by the
    tests."""

    what = "the Celery worker"
    ready_line = " ready."
    start_timeout_s = 90

    def __init__(self, env: dict[str, str], log: Path, queues: str = "alerts,default") -> None:
        super().__init__(env, log)
        self.queues = queues

    def arguments(self) -> list[str]:
        name = f"faults{os.getpid()}-{free_port()}@%h"
        return ["worker", "-Q", self.queues, "-c", "1", "-l", "INFO", "--without-gossip",
                "--without-mingle", "--without-heartbeat", "-n", name]  # fmt: skip

    def kill(self) -> None:
        """SIGKILL the worker and its pool: no warm shutdown, no chance to finish anything."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)


class Beat(CeleryProcess):
    """``celery -A config beat``: the real schedule (from the env's settings module), so nothing
    in a test calls a sweep or a tick by hand."""

    what = "Celery beat"
    ready_line = "beat: Starting"

    def __init__(self, env: dict[str, str], workdir: Path) -> None:
        super().__init__(env, workdir / "beat.log")
        self.schedule = workdir / "beat-schedule"

    def arguments(self) -> list[str]:
        return ["beat", "-l", "INFO", "-s", str(self.schedule)]


def stop_group(process: subprocess.Popen | None, grace_s: float = 15) -> None:
    """SIGTERM a process group started with ``start_new_session``; SIGKILL it after ``grace_s``."""
    if process is None or process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)


def worker_env(
    broker_url: str,
    aws_url: str,
    database_url: str | None = None,
    settings_module: str = "config.settings.base",
    **env: str,
) -> dict[str, str]:
    """What a worker (or beat, or web) of the tests runs with: the test database (or
    ``database_url``), the broker, AWS at ``aws_url`` and email through its SES as ``SENDER``,
    no demo; then ``env``."""
    return vigil_env(
        settings_module,
        DATABASE_URL=database_url or worker_database_url(),
        CELERY_BROKER_URL=broker_url,
        AWS_ENDPOINT_URL=aws_url,
        EMAIL_BACKEND="apps.alerts.integrations.email.ses.EmailBackend",
        DEFAULT_FROM_EMAIL=SENDER,
        VIGIL_DEMO="false",
        **env,
    )


def worker_database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@contextmanager
def publishing_to(redis: RedisServer, **conf: object) -> Iterator[None]:
    """Publish this process's wake-ups (send_alerts after each transition) to ``redis``."""
    app = celery_app
    saved = {k: app.conf[k] for k in ("broker_url", *conf)}

    def reconnect() -> None:  # drop cached connections to the previous broker
        app._pool = None
        app.amqp._producer_pool = None

    app.conf.update(broker_url=redis.url, **conf)
    reconnect()
    try:
        yield
    finally:
        app.conf.update(saved)
        reconnect()

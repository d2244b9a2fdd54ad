"""Real processes and servers for the fault suite, all on loopback and all our own.

- ``PrivatePostgres``: a PostgreSQL 15 cluster of the test's own (initdb + pg_ctl into a
  temporary directory, a free port), so restarting it disturbs no other session;
- ``CloudWatchProxy``: a proxy in front of the moto server that answers every CloudWatch call
  with ``Throttling`` while ``throttling`` is set, as CloudWatch does under a rate limit;
- ``FaultWorker``: ``celery -A config worker`` on the queues a scenario needs, whose pool
  process can be SIGKILLed alone (``kill_pool``) or with its parent (``kill``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.services import free_port, serve_in_a_thread, wait_for
from tests.services.ses_proxy import relay, respond
from tests.services.workers import Worker


def _pg_bin() -> Path:
    """Debian's PostgreSQL server binaries, the newest installed (15 on bookworm)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: int(p.parts[4]))
    assert found, "the fault suite needs Debian's PostgreSQL server (postgresql-15)"
    return found[-1].parent


CLOUDWATCH = "GraniteServiceVersion20100801"  # CloudWatch's target prefix


class PrivatePostgres:
    """A throw-away PostgreSQL cluster, run as the ``postgres`` OS user when we are root
    (PostgreSQL refuses to run as root), with trust authentication on 127.0.0.1 only."""

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="vigil-faults-pg-"))
        self.data = self.dir / "data"
        self.log = self.dir / "postgres.log"
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/vigil"
        self._as_postgres = os.getuid() == 0
        self.bin = _pg_bin()

    def _run(self, *argv: str, timeout: float = 60) -> None:
        command = [*argv]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, timeout=timeout, capture_output=True)

    def start(self) -> None:
        if self._as_postgres:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
            "--encoding=UTF8",
            "--locale=C",
        )
        with (self.data / "postgresql.auto.conf").open("a") as conf:
            conf.write(
                f"port = {self.port}\nlisten_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{self.dir}'\nmax_connections = 50\n"
                "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
            )
        self._pg_ctl("start")
        self._run(
            str(self.bin / "createdb"),
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            "postgres",
            "vigil",
        )

    def _pg_ctl(self, *args: str) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", *args)

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every connection is terminated, then it starts again."""
        self._pg_ctl("-m", "fast", "restart")

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            with contextlib.suppress(subprocess.SubprocessError):
                self._pg_ctl("-m", "immediate", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)


def _cbor_text(value: str) -> bytes:
    data = value.encode()
    if len(data) < 24:
        return bytes([0x60 + len(data)]) + data
    return bytes([0x78, len(data)]) + data


def _cbor_error(type_: str, message: str) -> bytes:
    """``{"__type": type_, "message": message}`` in CBOR, the way CloudWatch's rpc-v2 answers."""
    return (
        b"\xa2"
        + _cbor_text("__type")
        + _cbor_text(type_)
        + _cbor_text("message")
        + (_cbor_text(message))
    )


class CloudWatchProxy:
    """Forwards every AWS call to moto; while ``throttling`` is set, CloudWatch calls get
    HTTP 400 ``Throttling`` ("Rate exceeded") instead, in the protocol they were sent in
    (AWS JSON 1.0 by this botocore, rpc-v2-cbor or the query protocol's XML by others)."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.throttling = False
        self.throttled = 0
        self.cloudwatch_calls = 0
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                target = self.headers.get("X-Amz-Target", "")
                if self.path.startswith(f"/service/{CLOUDWATCH}/"):
                    protocol = "cbor"
                elif target.startswith(f"{CLOUDWATCH}."):
                    protocol = "json"
                elif b"Version=2010-08-01" in body and b"Action=" in body:
                    protocol = "query"
                else:
                    protocol = ""
                if protocol:
                    with proxy._lock:
                        proxy.cloudwatch_calls += 1
                        throttle = proxy.throttling
                        proxy.throttled += throttle
                    if throttle:
                        self._throttle(protocol)
                        return
                relay(self, proxy.upstream, "POST", body, timeout=60)

            def do_GET(self) -> None:
                relay(self, proxy.upstream, "GET", None, timeout=60)

            def _throttle(self, protocol: str) -> None:
                # awsQueryCompatible: the query protocol's code rides in x-amzn-query-error.
                compatible = {"x-amzn-query-error": "Throttling;Sender"}
                if protocol == "cbor":
                    payload = _cbor_error("ThrottlingException", "Rate exceeded")
                    headers = {
                        "Content-Type": "application/cbor",
                        "smithy-protocol": "rpc-v2-cbor",
                        **compatible,
                    }
                elif protocol == "json":
                    payload = json.dumps(
                        {"__type": "ThrottlingException", "message": "Rate exceeded"}
                    ).encode()
                    headers = {"Content-Type": "application/x-amz-json-1.0", **compatible}
                else:
                    payload = (
                        b'<ErrorResponse xmlns="http://monitoring.amazonaws.com/doc/2010-08-01/">'
                        b"<Error><Type>Sender</Type><Code>Throttling</Code>"
                        b"<Message>Rate exceeded</Message></Error>"
                        b"<RequestId>fault-proxy</RequestId></ErrorResponse>"
                    )
                    headers = {"Content-Type": "text/xml"}
                respond(self, 400, headers.items(), payload)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        serve_in_a_thread(self.server)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            out += [int(p) for p in (task / "children").read_text().split()]
    return out


class FaultWorker(Worker):
    """A real Celery worker (prefork, one pool process) whose pool process can die alone."""

    def kill_pool(self) -> int:
        """SIGKILL the pool process running the task; the parent lives and sees it lost."""
        (child,) = _children(self.process.pid)
        os.kill(child, signal.SIGKILL)
        return child

    def output(self) -> str:
        return self.log.read_text()

    def wait_idle(self, timeout: float = 30) -> None:
        """Until every task it received has ended (succeeded, failed or was lost)."""

        def idle() -> bool:
            log = self.output()
            ended = log.count("] succeeded in ") + log.count("] raised ")
            return log.count("] received") == ended + log.count("WorkerLostError('")

        wait_for(idle, timeout, "the worker to be idle", interval=0.5)

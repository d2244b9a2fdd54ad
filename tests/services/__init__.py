"""The processes and servers the tests start, one module each, all on loopback and all ours.

``galera`` (a 3-node MariaDB Galera cluster and garbd), ``nginx``, ``sshd``, ``workers``
(Redis, Celery workers and beat), ``faults`` (a private PostgreSQL, a throttling CloudWatch
proxy), ``receiver`` (webhooks, Slack, PagerDuty), ``ses_proxy`` (SES that fails on demand),
``mysql_recorder`` (a MySQL server that records what a client sends) and ``edge_servers``
(misbehaving HTTP servers). The moto server is a fixture (``tests/plugins/aws.py``). Tests that use
them are marked by what they need (``SERVICE_FIXTURES``, ``SERVICE_MODULES`` in ``tests/plugins/marks.py``).
"""

from __future__ import annotations

import fcntl
import os
import socket
import socketserver
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def free_port() -> int:
    """A loopback port nobody listens on now (the OS's choice)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve_in_a_thread(server: socketserver.BaseServer) -> None:
    """Run ``server`` on a daemon thread that notices its ``shutdown()`` within 50 ms:
    ``serve_forever`` looks every 0.5 s by default, which was half a second of every teardown of
    a test with a receiver, SES or an AWS error server (28 tests of make check, 13 s)."""
    kwargs = {"poll_interval": 0.05}
    threading.Thread(target=server.serve_forever, kwargs=kwargs, daemon=True).start()


def vigil_env(settings_module: str = "config.settings.base", **env: str) -> dict[str, str]:
    """The environment of a Vigil process a test starts: this one's without its settings
    (``DJANGO_*``, ``VIGIL_*``, ``DATABASE_URL``, ``SECRET_KEY``), then
    ``DJANGO_SETTINGS_MODULE`` and ``env``."""
    ours = ("DATABASE_URL", "SECRET_KEY")
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "VIGIL_")) and k not in ours
    }
    return {**clean, "DJANGO_SETTINGS_MODULE": settings_module, **env}


def wait_for(
    check: Callable[[], T],
    timeout: float,
    what: str,
    *,
    interval: float = 0.1,
    retry_on: tuple[type[Exception], ...] = (),
    error: type[Exception] = AssertionError,
) -> T:
    """Call ``check`` until it returns something truthy, and return that.

    ``retry_on``: exceptions that mean "not yet" (a server still starting refuses connections);
    any other propagates. On timeout, raise ``error`` naming ``what`` (and the last exception).
    """
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = check()
        except retry_on as exc:
            last_error = exc
        else:
            if value:
                return value
        time.sleep(interval)
    cause = f" ({last_error})" if last_error else ""
    raise error(f"Timed out after {timeout:g} s waiting for {what}{cause}")


@contextmanager
def machine_lock(name: str) -> Iterator[None]:
    """Held by one process of the machine at a time (``fcntl.flock`` on a file in /tmp, let go
    when the process dies): around what two test processes (``make test``'s two xdist workers,
    two checkouts) must not do at once, such as installing into a shared folder."""
    with (Path(tempfile.gettempdir()) / f"vigil-tests-{name}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


JS = Path(__file__).resolve().parents[1] / "js"


def npm_ci(needed: str) -> None:
    """``npm ci`` in tests/js (as ``make test`` does) unless ``node_modules/<needed>`` is there;
    once at a time, and not again when another process did it meanwhile."""
    if (JS / "node_modules" / needed).exists():
        return
    with machine_lock("npm-ci"):
        if not (JS / "node_modules" / needed).exists():
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--silent"], cwd=JS, check=True)

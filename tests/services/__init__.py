"""The processes and servers the tests start, one module each, all on loopback and all ours.

``galera`` (a 3-node MariaDB Galera cluster and garbd), ``nginx``, ``sshd``, ``workers``
(Redis, Celery workers and beat), ``faults`` (a private PostgreSQL, a throttling CloudWatch
proxy), ``receiver`` (webhooks, Slack, PagerDuty), ``ses_proxy`` (SES that fails on demand),
``mysql_recorder`` (a MySQL server that records what a client sends) and ``edge_servers``
(misbehaving HTTP servers). The moto server is a fixture (``tests/conftest.py``). Tests that use
them are marked by what they need (``SERVICE_FIXTURES``, ``SERVICE_MODULES`` there).
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def free_port() -> int:
    """A loopback port nobody listens on now (the OS's choice)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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

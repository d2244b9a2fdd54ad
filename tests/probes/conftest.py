"""Fixtures for the keep-alive probe: a real nginx on loopback ports (Debian's nginx)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.services.nginx import KEEPALIVE_TIMEOUTS, Nginx, Site


@pytest.fixture(scope="session")
def nginx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Nginx]:
    """One nginx with a server block per keepalive_timeout, over HTTP and HTTPS."""
    sites = [Site(timeout, tls) for timeout in KEEPALIVE_TIMEOUTS for tls in (False, True)]
    server = Nginx(tmp_path_factory.mktemp("nginx"), sites).start()
    try:
        yield server
    finally:
        server.stop()

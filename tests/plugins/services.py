"""Processes beyond Python and the database, each on loopback: the Galera cluster, a private
Redis and a Celery client on it, names in /etc/hosts, slapd, the OpenID provider, and a migrated
SQLite file for ``make run`` (the process classes are in tests/services/)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers import ROOT


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory) -> Path:
    """A SQLite database file with every migration applied, for ``make run`` started by a test
    (tests/services/make_run.py copies it into its var directory instead of migrating again)."""
    # the harness of a service loads only for the tests that start it
    from tests.services import vigil_env

    var = tmp_path_factory.mktemp("migrated-var")
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--verbosity", "0"],
        cwd=ROOT,
        env=vigil_env(VIGIL_VAR_DIR=str(var), VIGIL_DEMO="false"),
        check=True,
        timeout=300,
    )
    return var / "vigil.sqlite3"


HOSTS_FILE = Path("/etc/hosts")
HOSTS_LOCK = Path("/tmp/vigil-tests-etc-hosts.lock")


def _rewrite_hosts(change: Callable[[list[str]], list[str]]) -> None:
    """Rewrite /etc/hosts through ``change`` (its lines), under a lock other test runs share,
    atomically where the file can be replaced (else in place: a container's bind mount)."""
    import fcntl
    import tempfile

    with HOSTS_LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lines = change(HOSTS_FILE.read_text().splitlines())
        text = "\n".join(lines) + "\n"
        fd, temporary = tempfile.mkstemp(dir=HOSTS_FILE.parent, prefix=".hosts-vigil-")
        try:
            with os.fdopen(fd, "w") as out:
                out.write(text)
            os.chmod(temporary, HOSTS_FILE.stat().st_mode & 0o777)
            os.replace(temporary, HOSTS_FILE)
        except OSError:
            os.unlink(temporary)
            HOSTS_FILE.write_text(text)


@pytest.fixture
def hosts_entry() -> Iterator[Callable[[str], str]]:
    """``point(address)`` → a name of this test's own that resolves to ``address`` (through
    /etc/hosts: there is no DNS server here); calling it again repoints the same name, as a DNS
    record changed between save and connect would. Only our own line is ever touched."""
    import uuid

    name = f"vigil-test-{uuid.uuid4().hex[:12]}.example"
    marker = f"# vigil test {name}"

    def without_ours(lines: list[str]) -> list[str]:
        return [line for line in lines if not line.endswith(marker)]

    def point(address: str, label: str = "") -> str:
        """``label`` (an A-label such as ``xn--fa-hia``) goes in front of the name."""
        full = f"{label}.{name}" if label else name
        _rewrite_hosts(lambda lines: [*without_ours(lines), f"{address} {full} {marker}"])
        return full

    yield point
    _rewrite_hosts(without_ours)


@pytest.fixture
def redis(tmp_path) -> Iterator[object]:
    """A private redis-server on a free port (tests/services/workers.py): stopping it disturbs
    nobody else."""
    # the harness of a service loads only for the tests that start it
    from tests.services.workers import RedisServer

    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def broker(redis) -> Iterator[object]:
    """A Celery client on ``redis``: the test publishes what beat would (a sweep, a tick)."""
    from celery import Celery

    client = Celery("tests", broker=redis.url, set_as_current=False)  # shared tasks stay ours
    yield client
    client.close()


@pytest.fixture(scope="session")
def galera_cluster():
    """A real 3-node MariaDB Galera cluster plus garbd, started once per test session
    (tests/services/galera.py; ``TEST_GALERA_PORT`` moves its ports)."""
    # the harness of a service loads only for the tests that start it
    from tests.services.galera import GaleraCluster

    cluster = GaleraCluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.teardown()


@pytest.fixture
def galera(galera_cluster):
    """The cluster with 3 Synced nodes and garbd, whatever an earlier test left behind."""
    galera_cluster.ensure_healthy()
    return galera_cluster


@pytest.fixture(scope="session")
def slapd() -> Iterator[object]:
    """Debian's slapd on loopback with a small directory and a CA of its own (one per session;
    a test that changes a group puts it back)."""
    # the harness of a service loads only for the tests that start it
    from tests.services.slapd import Slapd

    server = Slapd().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def oidc_provider(live_server) -> Iterator[object]:
    """oidc-provider (Node.js) on loopback, its client's redirect pointing at the live server."""
    # the harness of a service loads only for the tests that start it
    from tests.services.oidc import OidcProvider

    provider = OidcProvider(live_server.url).start()
    try:
        yield provider
    finally:
        provider.stop()

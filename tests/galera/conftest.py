"""A real 3-node MariaDB Galera cluster plus garbd, started once per test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.galera.cluster import GaleraCluster


@pytest.fixture(scope="session")
def galera_cluster() -> Iterator[GaleraCluster]:
    cluster = GaleraCluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.teardown()


@pytest.fixture
def galera(galera_cluster: GaleraCluster) -> GaleraCluster:
    """The cluster with 3 Synced nodes and garbd, whatever an earlier test left behind."""
    galera_cluster.ensure_healthy()
    return galera_cluster

"""The real 3-node MariaDB Galera cluster plus garbd is a session fixture of
tests/plugins/services.py (``galera_cluster``, and ``galera``: healthy again for each test), so
that every test that needs it, the alerts' end-to-end proofs too, shares one cluster per session."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.services.galera import MONITOR_PASSWORD, MONITOR_USER


@pytest.fixture
def watch_galera(galera, site, monkeypatch) -> Callable[..., object]:
    """``watch_galera(name, pushing=())`` → the real cluster as a ``Cluster`` of Vigil's at the
    ``site`` (3 data nodes and an arbitrator expected), each node read as the monitor user with
    its password in ``GALERA_TEST_PASSWORD``: polled, or pushing when named in ``pushing``."""
    from apps.galera.models import Cluster, Node

    monkeypatch.setenv("GALERA_TEST_PASSWORD", MONITOR_PASSWORD)

    def watch(name: str, pushing: tuple[str, ...] = ()) -> Cluster:
        cluster = Cluster.objects.create(
            region=site, name=name, expected_data_nodes=3, expected_arbitrators=1
        )
        for node in galera.nodes:
            Node.objects.create(
                cluster=cluster,
                name=node.name,
                host="127.0.0.1",
                port=node.sql_port,
                user=MONITOR_USER,
                password_env="GALERA_TEST_PASSWORD",
                mode=Node.Mode.PUSH if node.name in pushing else Node.Mode.POLL,
            )
        return cluster

    return watch

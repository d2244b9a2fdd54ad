"""Collector -> status -> transition -> page, on the real 3-node cluster plus garbd.

The adapter-level scenarios (second kill, two at once, clean stops, desync) are in
test_mysql.py; this proves the Django glue with one kill and one rejoin. Each poll runs
once the harness has seen the failure settle, as the beat would find it a minute later.
"""

from __future__ import annotations

import pytest
from django.contrib.contenttypes.models import ContentType

from apps.alerts.models import Transition
from apps.galera import tasks
from apps.galera.models import Cluster
from tests.services.galera import GaleraCluster

pytestmark = pytest.mark.django_db


@pytest.fixture
def cluster(watch_galera) -> Cluster:
    return watch_galera("vigil-test")


def transitions(cluster: Cluster) -> list[tuple[str, str]]:
    rows = Transition.objects.filter(
        content_type=ContentType.objects.get_for_model(Cluster), object_id=cluster.pk
    ).order_by("created", "pk")
    return [(t.old_status, t.new_status) for t in rows]


def test_a_kill_warns_with_headroom_and_a_rejoin_brings_the_cluster_back_to_ok(
    galera: GaleraCluster, cluster: Cluster, logged_in_client
):
    assert tasks.poll_cluster(cluster.pk) == "ok"
    cluster.refresh_from_db()
    assert (cluster.cluster_size, cluster.data_nodes, cluster.arbitrators) == (4, 3, 1)
    assert (cluster.one_by_one, cluster.simultaneous) == (2, 1)
    assert cluster.primary is True
    assert cluster.suspect_timeout_s == 2.0  # read from wsrep_provider_options
    assert transitions(cluster) == [("unknown", "ok")]

    node3 = galera.node("node3")
    galera.kill(node3)
    galera.wait_size(3)
    assert tasks.poll_cluster(cluster.pk) == "warning"

    cluster.refresh_from_db()
    assert (cluster.cluster_size, cluster.data_nodes, cluster.arbitrators) == (3, 2, 1)
    assert (cluster.one_by_one, cluster.simultaneous) == (1, 1)
    assert "node3 unreachable: (2003)" in cluster.reason
    assert "2 of 3 data nodes in the Primary component" in cluster.reason
    assert transitions(cluster) == [("unknown", "ok"), ("ok", "warning")]
    assert cluster.nodes.get(name="node3").state == "unreachable"
    page = logged_in_client.get(f"/galera/clusters/{cluster.pk}/").content.decode()
    assert "Can lose 1 more node one at a time, 1 at once." in page
    assert "evs.suspect_timeout, 2 s on this cluster" in page
    assert "<strong>down</strong>" in page
    assert "ok → warning" in page

    galera.rejoin(node3)
    galera.wait_size(4)
    assert tasks.poll_cluster(cluster.pk) == "ok", Cluster.objects.get(pk=cluster.pk).reason

    cluster.refresh_from_db()
    assert cluster.reason == (
        "Primary, 3 data nodes + 1 arbitrator Synced; "
        "can lose 2 more nodes one at a time, 1 at once"
    )
    assert transitions(cluster)[-1] == ("warning", "ok")
    assert cluster.nodes.get(name="node3").detail == "Synced"
    sizes = list(cluster.snapshots.order_by("created").values_list("cluster_size", flat=True))
    assert sizes == [4, 3, 4]

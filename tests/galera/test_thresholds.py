"""Galera thresholds per cluster and per region: a send queue threshold set for one cluster
changes its status only, one set for the region applies to its clusters unless one sets its
own, and the reason says which threshold applied (through save_poll, no Galera needed)."""

from __future__ import annotations

import pytest

from apps.galera import collect
from apps.galera.replication import SPECS, Thresholds
from apps.galera.verdict import build_view, cluster_verdict
from apps.lib.status import Status
from apps.lib.thresholds import resolve
from apps.regions import thresholds
from apps.regions.models import Region
from tests.galera.test_tasks import make_cluster, nodes_for, status
from tests.galera.test_verdict import node


def test_a_lower_queue_threshold_of_its_own_warns_and_says_so():
    own = resolve(SPECS, Thresholds(), {}, {"recv_queue": 2}, noun="cluster", region_label="x")
    view = build_view([node("node1", local_recv_queue_avg="4.5"), node("node2"), node("node3")])
    assert cluster_verdict(view).status is Status.OK
    verdict = cluster_verdict(view, thresholds=own)
    assert verdict.status is Status.WARNING
    assert verdict.reason.endswith(
        "(it does not report wsrep_local_recv_queue) (over 2: this cluster's threshold; "
        "default 10 write-sets)"
    )


def test_flow_control_is_set_in_percent():
    own = resolve(SPECS, Thresholds(), {"flow_control_paused_pct": 50}, {}, noun="cluster",
                  region_label="eu-west-1")  # fmt: skip
    assert own.flow_control_paused == 0.5
    view = build_view([node("node1", flow_control_paused="0.3"), node("node2"), node("node3")])
    assert cluster_verdict(view).status is Status.WARNING
    assert cluster_verdict(view, thresholds=own).status is Status.OK


def twice(cluster, send_queue: str) -> object:
    nodes = [status("a", local_send_queue=send_queue), status("b"), status("c")]
    collect.save_poll(cluster, nodes)
    return collect.save_poll(cluster, nodes)


@pytest.mark.django_db
def test_a_per_cluster_threshold_changes_that_cluster_and_no_other(site):
    scratch, prod = make_cluster(site, name="scratch"), make_cluster(site, name="prod")
    for cluster in (scratch, prod):
        nodes_for(cluster, "a", "b", "c")
    thresholds.replace("galera", site, scratch.pk, {"send_queue": 4})
    verdict = twice(scratch, "6")
    assert verdict.status is Status.WARNING
    assert verdict.reason == (
        "a send queue 6 write-sets, 6 at the previous poll "
        "(over 4: this cluster's threshold; default 10 write-sets)"
    )
    assert twice(prod, "6").status is Status.OK


@pytest.mark.django_db
def test_a_region_threshold_applies_unless_the_cluster_sets_its_own(site):
    plain, own = make_cluster(site, name="plain"), make_cluster(site, name="own")
    far_site = Region.objects.create(kind=Region.Kind.SITE, code="far", name="Far")
    far = make_cluster(far_site, name="far")
    for cluster in (plain, own, far):
        nodes_for(cluster, "a", "b", "c")
    thresholds.replace("galera", site, None, {"send_queue": 4})
    thresholds.replace("galera", site, own.pk, {"send_queue": 20})
    verdict = twice(plain, "6")
    assert verdict.status is Status.WARNING
    assert f"(over 4: {site.code}'s threshold; default 10 write-sets)" in verdict.reason
    assert twice(own, "12").status is Status.OK  # its own 20 wins over the region's 4
    assert twice(far, "6").status is Status.OK  # another region: the default


@pytest.mark.django_db
def test_admins_set_them_through_the_api(site, admin_client):
    cluster = make_cluster(site)
    url = f"/api/galera/clusters/{cluster.pk}/thresholds/"
    shown = admin_client.get(url).json()
    assert shown["defaults"]["flow_control_paused_pct"] == 10.0
    put = admin_client.put(url, {"recv_queue": 5}, content_type="application/json")
    assert put.status_code == 200 and put.json()["own"] == {"recv_queue": 5.0}
    page = admin_client.get(f"/galera/clusters/{cluster.pk}/").content.decode()
    assert "Receive queue above, two polls" in page and "Save the thresholds" in page

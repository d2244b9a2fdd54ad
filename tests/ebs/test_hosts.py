"""Where EBS meets Galera and RAID (apps/ebs/hosts.py, through the concern registry): a node's
or a storage server's instance found by private address, Name tag or a link; their volumes on
the cluster and host pages; an out-of-credit volume in a flow-control warning; the array that
slows first."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.ebs.hosts import carried, galera_placements, raid_placements
from apps.ebs.models import HostLink, Instance, Volume
from apps.ebs.placement import DEVICE_TAG
from apps.galera import collect as galera_collect
from apps.galera.models import Cluster, Node
from apps.galera.verdict import build_view, cluster_verdict
from apps.raid.collect import ingest
from apps.raid.demo import SEED_DOMAINS, SEED_RULES, seed_layout_mdstat
from apps.raid.models import Host
from apps.regions import concerns
from apps.regions.models import Account, Region
from tests.galera.test_verdict import node

pytestmark = pytest.mark.django_db

DRAINING = {"credit_state": "draining", "hours_to_exhaustion": 0.7, "burst_balance_pct": 21.0}
EXHAUSTED = {"credit_state": "exhausted", "hours_to_exhaustion": 0.0, "burst_balance_pct": 0.0}
STEADY = {"credit_state": "not draining", "burst_balance_pct": 100.0}


@pytest.fixture
def region(db) -> Region:
    account = Account.objects.create(name="Lab account")
    return Region.objects.create(account=account, code="eu-west-1", opt_in_status="opted-in")


def instance(region, name, address="", **kw) -> Instance:
    return Instance.objects.create(
        region=region, instance_id=f"i-{abs(hash(name)) % 10**12:012x}", name=name,
        instance_type="m5.large", private_ips=[address] if address else [], root_device="/dev/sda1",
        **kw,
    )  # fmt: skip


def volume(region, on, device, figures, tag="", name="") -> Volume:
    return Volume.objects.create(
        region=region, volume_id=f"vol-{abs(hash((on.pk, device))) % 10**12:012x}", name=name,
        volume_type="gp2", size_gib=50, instance=on, device=device, figures=figures,
        tags={DEVICE_TAG: tag} if tag else {}, status="critical" if figures is EXHAUSTED else "ok",
    )  # fmt: skip


@pytest.fixture
def cluster(region) -> Cluster:
    cluster = Cluster.objects.create(region=region, name="prod-db", expected_data_nodes=3)
    for i, host in enumerate(("10.0.1.11", "10.0.1.12", "10.0.1.13"), start=1):
        Node.objects.create(cluster=cluster, name=f"node{i}", host=host, port=3306)
    return cluster


def test_a_galera_node_is_placed_by_private_address_or_by_a_link(region, cluster):
    db2 = instance(region, "db-2", "10.0.1.12")
    volume(region, db2, "/dev/sdf", EXHAUSTED, name="db-2-data")
    elsewhere = instance(region, "db-3-moved")
    HostLink.objects.create(
        galera_node=cluster.nodes.get(name="node3"), instance_id=elsewhere.instance_id
    )

    placed = galera_placements(cluster)

    assert set(placed) == {"node2", "node3"}
    assert placed["node2"].how == "private address 10.0.1.12"
    assert placed["node3"].how == "named in Vigil"
    assert concerns.notes(cluster) == {
        "node2": [
            "its gp2 volume db-2-data (" + db2.volumes.get().volume_id + ") is out of burst credits"
        ]
    }
    assert carried(region.pk) == {
        db2.pk: ["Galera node node2 of prod-db"],
        elsewhere.pk: ["Galera node node3 of prod-db"],
    }


def test_a_flow_control_warning_names_the_volume_out_of_credits(region, cluster):
    db2 = instance(region, "db-2", "10.0.1.12")
    data = volume(region, db2, "/dev/sdf", EXHAUSTED, name="db-2-data")
    results = [node("node1"), node("node2", flow_control_paused="0.4"), node("node3")]

    verdict = galera_collect.save_poll(cluster, results, timezone.now())

    assert (
        f"node2 paused by flow control 40% of the time since it started or its last FLUSH STATUS"
        " (wsrep_flow_control_paused, an average: it does not report"
        f" wsrep_flow_control_paused_ns); its gp2 volume db-2-data ({data.volume_id})"
        " is out of burst credits"
    ) in verdict.reason
    # Paused on another node than the slow one: the slow one is named.
    other = cluster_verdict(
        build_view([node("node1", flow_control_paused="0.4"), node("node2"), node("node3")]),
        node_notes={"node2": ["its gp2 volume v is out of burst credits"]},
    )
    assert "node1 paused by flow control 40% of the time since" in other.reason
    assert "_ns); node2: its gp2 volume v is out of burst credits" in other.reason


def test_the_cluster_page_shows_the_nodes_volumes_and_their_burst_balance(
    region, cluster, logged_in_client
):
    db2 = instance(region, "db-2", "10.0.1.12")
    data = volume(region, db2, "/dev/sdf", DRAINING, name="db-2-data")
    page = logged_in_client.get(
        reverse("galera:cluster_detail", args=[cluster.pk])
    ).content.decode()
    assert "EBS volumes under it" in page and "db-2-data" in page
    assert reverse("ebs:volume_detail", args=[data.pk]) in page and "0.7 h" in page


@pytest.fixture
def lab(region) -> Host:
    """The md-RAID lab: a client whose legs are iSCSI disks of three storage servers, each disk
    a 50 GB gp2 volume tagged with the device the client sees; storage-b's draining."""
    host = Host.objects.create(
        name="storage-client", region=region, domain_rules=SEED_RULES, domain_noun="storage server"
    )
    ingest(host, seed_layout_mdstat())
    for server in ("storage-a", "storage-b", "storage-c"):
        box = instance(region, server)
        for i, device in enumerate(d for d, s in sorted(SEED_DOMAINS.items()) if s == server):
            figures = (
                dict(DRAINING, hours_to_exhaustion=0.7 + i / 60)
                if server == "storage-b"
                else STEADY
            )
            volume(
                region,
                box,
                f"/dev/sd{'fghij'[i]}",
                figures,
                tag=device,
                name=f"{server}-lun{i + 1}",
            )
    return host


def test_a_raid_hosts_storage_servers_are_placed_by_name_and_the_array_that_slows_is_told(
    lab, logged_in_client
):
    own, domains = raid_placements(lab)
    assert own is None and sorted(domains) == ["storage-a", "storage-b", "storage-c"]
    assert domains["storage-b"].how == "Name tag storage-b"
    aside = concerns.asides(lab)[0][1]
    assert aside["headlines"] == ["md99 slows in ~42 min: the gp2 volumes of storage-b drain first"]
    md1 = next(leg for leg in aside["legs"] if leg.name == "md1")
    assert [(m.device, m.domain, [v.label for v in m.volumes]) for m in md1.members] == [
        (
            "sdb",
            "storage-a",
            [v.label for v in domains["storage-a"].volumes if v.tags[DEVICE_TAG] == "sdb"],
        ),
        (
            "sdg",
            "storage-b",
            [v.label for v in domains["storage-b"].volumes if v.tags[DEVICE_TAG] == "sdg"],
        ),
        (
            "sdl",
            "storage-c",
            [v.label for v in domains["storage-c"].volumes if v.tags[DEVICE_TAG] == "sdl"],
        ),
    ]
    page = logged_in_client.get(reverse("raid:host_detail", args=[lab.pk])).content.decode()
    assert "md99 slows in ~42 min: the gp2 volumes of storage-b drain first" in page
    assert "storage-b-lun1" in page
    box = Instance.objects.get(name="storage-b")
    assert carried(lab.region_id)[box.pk] == [
        "storage server storage-b of RAID host storage-client"
    ]


def test_nothing_is_shown_where_nothing_is_placed(region, cluster, logged_in_client):
    page = logged_in_client.get(
        reverse("galera:cluster_detail", args=[cluster.pk])
    ).content.decode()
    assert "EBS volumes under it" not in page
    assert concerns.notes(cluster) == {}

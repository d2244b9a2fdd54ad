"""The region panel and the cluster page, fed by the demo's recorded samples and by polls."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.galera import collect, demo, tasks
from apps.galera.models import Cluster, Node, Snapshot
from apps.galera.parse_wsrep import WsrepStatus
from apps.galera.verdict import NodeResult
from apps.regions.models import Region

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_clusters() -> list[Cluster]:
    clusters = demo.set_up()  # polls each demo cluster once
    return [Cluster.objects.get(pk=c.pk) for c in clusters]


def test_the_region_panel_shows_status_size_primary_and_headroom_in_words(
    logged_in_client, demo_clusters
):
    region = demo_clusters[0].region
    page = logged_in_client.get(reverse("regions:detail", args=[region.pk])).content.decode()

    assert 'id="panel-galera"' in page
    assert "Demo: 4-node MariaDB Galera (recorded sample)" in page
    assert "demo: recorded sample" in page
    assert "4 / 4" in page
    assert "Can lose 2 more nodes one at a time, 1 at once" in page
    assert "Can lose 1 more node one at a time, 1 at once" in page
    assert 'hx-trigger="every 30s"' in page

    partial = logged_in_client.get(reverse("regions:panel", args=[region.pk, "galera"]))
    assert partial.content.decode().startswith(f'<div id="galera-panel-{region.pk}"')


def test_the_demo_cluster_page_is_labelled_as_a_recorded_sample(logged_in_client, demo_clusters):
    cluster = demo_clusters[0]
    page = logged_in_client.get(
        reverse("galera:cluster_detail", args=[cluster.pk])
    ).content.decode()
    page = " ".join(page.split())  # as a browser shows it: the template wraps its lines

    assert "recorded sample" in page
    assert "deimosfr-4node-synced-primary.txt" in page
    assert "No connection is made to these addresses." in page
    assert "Can lose 2 more nodes one at a time, 1 at once." in page
    assert "at least the detection time apart (evs.suspect_timeout, 5 s by default)" in page
    assert "<strong>Synced</strong>" in page
    assert "One poll so far: the chart starts with the second." in page
    tasks.poll_cluster(cluster.pk)
    again = logged_in_client.get(
        reverse("galera:cluster_detail", args=[cluster.pk])
    ).content.decode()
    assert 'data-source="galera-size"' in again
    assert "unknown → ok" in page


def test_the_demo_cluster_of_4_data_nodes_lists_all_4(logged_in_client, demo_clusters):
    cluster = demo_clusters[0]
    page = logged_in_client.get(
        reverse("galera:cluster_detail", args=[cluster.pk])
    ).content.decode()

    assert "4 members of 4 expected (4 data nodes)" in " ".join(page.split())
    assert page.count('<tr class="galera-node ') == 4
    for address in ("10.0.0.2:3306", "10.0.0.3:3306", "10.0.0.4:3306"):
        assert f'<tr class="galera-node galera-node-unlisted"> <td>{address}</td>' in " ".join(
            page.split()
        )
    assert "not added to Vigil: the recorded sample is one node's" in " ".join(page.split())


def test_the_cluster_page_shows_node_states_queues_and_flow_control(logged_in_client):
    site = Region.objects.create(code="dc1", name="DC 1", kind=Region.Kind.SITE)
    cluster = Cluster.objects.create(region=site, name="prod", expected_arbitrators=1)
    for i, name in enumerate(["db1", "db2", "db3"]):
        Node.objects.create(cluster=cluster, name=name, host="10.0.0.1", port=3306 + i)

    def donor_rows(comment: str) -> list[tuple[str, str]]:
        return [
            ("wsrep_provider_name", "Galera"),
            ("wsrep_cluster_status", "Primary"),
            ("wsrep_cluster_size", "3"),
            ("wsrep_cluster_conf_id", "5"),
            ("wsrep_local_state_comment", comment),
            ("wsrep_ready", "ON"),
            ("wsrep_flow_control_paused", "0.25"),
            ("wsrep_flow_control_sent", "12"),
            ("wsrep_flow_control_recv", "30"),
            ("wsrep_local_recv_queue_avg", "3.5"),
            ("wsrep_local_send_queue_avg", "0.125"),
            ("wsrep_local_cert_failures", "7"),
        ]

    def counted(comment: str, paused_ns: str, queue: str) -> list[tuple[str, str]]:
        return [
            *donor_rows(comment),
            ("wsrep_flow_control_paused_ns", paused_ns),
            ("wsrep_local_recv_queue", queue),
            ("wsrep_local_send_queue", "2"),
            ("wsrep_cluster_weight", "4"),
        ]

    start = timezone.now()
    for at, paused_ns, queue in (
        (start, "0", "0"),
        (start + timedelta(seconds=60), "30" + "0" * 9, "14"),
    ):
        results = [
            NodeResult("db1", status=WsrepStatus.from_rows(counted("Synced", paused_ns, queue))),
            # db2 runs a Galera without the counters: its lifetime averages are shown.
            NodeResult("db2", status=WsrepStatus.from_rows(donor_rows("Donor/Desynced"))),
            NodeResult("db3", error="(2003) Can't connect to MySQL server on '10.0.0.1'"),
        ]
        collect.save_poll(cluster, results, at)

    response = logged_in_client.get(reverse("galera:cluster_detail", args=[cluster.pk]))
    page = response.content.decode()
    assert "<strong>Donor/Desynced</strong>" in page
    assert "<strong>down</strong>" in page
    assert "(2003) Can&#x27;t connect to MySQL server" in page
    text = " ".join(page.split())
    assert "paused 50 % of the time between the last two readings (worst node" in text
    assert '50 %<br> <span class="muted">of 60 s</span>' in text  # db1: its counter
    assert '25 %<br><span class="muted">lifetime avg</span>' in text  # db2: no counter
    assert "longest now: 14 to apply, 2 to send" in text
    assert "<dt>Weight</dt> <dd>4 <span" in text
    assert "12 / 30" in page
    assert '<td> 7<br> <span class="galera-cert-rate">0 a minute</span>' in text
    assert 'class="muted">avg 3.50</span>' in page and 'class="muted">avg 0.13</span>' in page
    assert "recorded sample" not in page

    poll = logged_in_client.get(
        reverse("galera:cluster_detail", args=[cluster.pk]), headers={"HX-Request": "true"}
    )
    partial = poll.content.decode()
    assert partial.lstrip().startswith('<div id="live"')
    assert "<h1>" not in partial
    assert "<strong>Donor/Desynced</strong>" in partial and "12 / 30" in partial
    assert "size_chart" not in poll.context and "transitions" not in poll.context  # not read


def test_a_never_polled_cluster_shows_unknowns_not_zeros(logged_in_client):
    site = Region.objects.create(code="dc1", name="DC 1", kind=Region.Kind.SITE)
    cluster = Cluster.objects.create(region=site, name="new")
    Node.objects.create(cluster=cluster, host="10.0.0.1")
    page = logged_in_client.get(
        reverse("galera:cluster_detail", args=[cluster.pk])
    ).content.decode()
    assert "not polled yet" in page
    assert "No polls yet." in page
    assert "unknown: no Primary component was seen" in page


@pytest.mark.slow
def test_it_reads_the_cluster_page_in_a_constant_number_of_queries(logged_in_client):
    from tests.demo.pages import BIGGER, SMALL, queries

    # A day more of snapshots too: a query per snapshot would show.
    assert queries(logged_in_client, "cluster", **SMALL) == queries(
        logged_in_client, "cluster", **{**BIGGER, "days": 3}
    )


def test_the_cluster_pages_history_is_shared_until_a_new_snapshot_comes(logged_in_client, settings):
    """The charts and transfers are worked out once for every viewer while the newest
    snapshot is the same; a new snapshot shows at the next request."""
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    settings.VIGIL_PAGE_CACHE_SECONDS = 60
    cache.clear()
    site = Region.objects.create(code="dc1", name="DC 1", kind=Region.Kind.SITE)
    cluster = Cluster.objects.create(region=site, name="prod")
    for _ in range(2):
        Snapshot.objects.create(cluster=cluster, status="ok", cluster_size=3, nodes={})

    def page() -> tuple[str, bool]:
        with CaptureQueriesContext(connection) as seen:
            html = logged_in_client.get(cluster.get_absolute_url()).content.decode()
        return html, any("node_facts" in q["sql"] for q in seen.captured_queries)

    first, read = page()
    assert read and '"values": [3, 3]' in first
    again, read = page()
    assert not read and '"values": [3, 3]' in again
    Snapshot.objects.create(cluster=cluster, status="ok", cluster_size=2, nodes={})
    latest, read = page()
    assert read and '"values": [3, 3, 2]' in latest
    cache.clear()

"""Available downtime before SST: what the others' gcache holds at the commit rate."""

from __future__ import annotations

import math

import pytest

from apps.galera.downtime import Downtime, downtime_before_sst, duration, window_s
from apps.galera.models import Cluster, Snapshot


@pytest.mark.parametrize(
    ("cached_downto", "last_committed", "rate", "seconds"),
    [
        (1000, 11800, 1.0, 10800.0),  # 10,800 write-sets at 1 a second: 3 h
        (1000, 1000, 5.0, 0.0),  # a gcache that holds nothing but now
        (1000, 2000, 0.0, math.inf),  # no writes: it lasts as long as none come
        (None, 2000, 1.0, None),
        (0, 2000, 1.0, None),  # nothing cached (a node that just started)
        (3000, 2000, 1.0, None),  # readings of different moments
        (1000, 2000, None, None),  # no rate before the second poll
    ],
)
def test_it_works_out_the_window_of_one_gcache(cached_downto, last_committed, rate, seconds):
    assert window_s(cached_downto, last_committed, rate) == seconds


def test_a_node_may_be_down_as_long_as_the_best_other_donor_holds():
    donors = {"node1": (1000, 11800), "node2": (5000, 11800), "node3": (9000, 11800)}
    down = downtime_before_sst("node1", donors, 1.0)
    assert down == Downtime("node1", 6800.0, "node2", 6800, 1.0)
    assert down.words == (
        "node1 may be down ~113 min before it needs a full state transfer (node2's gcache holds "
        "6,800 write-sets, at 1 commits/s)"
    )
    assert downtime_before_sst("node2", donors, 1.0).donor == "node1"
    assert downtime_before_sst("node1", {"node1": (1, 5)}, 1.0) is None


def test_it_says_when_no_writes_came():
    down = downtime_before_sst("node1", {"node2": (1, 50)}, 0.0)
    assert down.words.startswith("node1 may be down as long as no writes come")


@pytest.mark.parametrize(
    ("seconds", "words"),
    [(45, "~45 s"), (720, "~12 min"), (3 * 3600, "~3 h"), (4 * 86400, "~4 days")],
)
def test_it_rounds_the_duration_for_people(seconds, words):
    assert duration(seconds) == words


@pytest.mark.django_db
def test_the_cluster_page_shows_each_nodes_downtime_beside_the_headroom(logged_in_client, site):
    cluster = Cluster.objects.create(
        region=site, name="prod-db", primary=True, polled_at="2026-11-26T10:00Z"
    )
    facts = {
        name: {
            "state": "primary",
            "local_state_comment": "Synced",
            "local_cached_downto": downto,
            "last_committed": 11800,
            "commits_per_s": 1.0,
        }
        for name, downto in (("db1", 1000), ("db2", 5000))
    }
    Snapshot.objects.create(cluster=cluster, status="ok", nodes=facts)
    page = logged_in_client.get(cluster.get_absolute_url()).content.decode()
    assert "Before a full state transfer" in page
    # db1 leaving: db2's gcache holds 6,800 write-sets; db2 leaving: db1's holds 10,800
    assert "Db1 may be down ~113 min before it needs a full state transfer" in page
    assert "Db2 may be down ~3 h before it needs a full state transfer" in page


@pytest.mark.django_db
def test_the_replication_history_downloads_as_csv(logged_in_client, site):
    cluster = Cluster.objects.create(region=site, name="prod-db")
    for minute, share in enumerate((0.05, 0.5)):
        Snapshot.objects.create(
            cluster=cluster,
            created=f"2026-11-26T03:0{minute}Z",
            status="ok",
            flow_control_paused_share=share,
            cert_failures_per_minute=2.0,
            recv_queue=3,
            send_queue=0,
            nodes={"db1": {"repl_latency_s": 0.0005}, "db2": {"repl_latency_s": None}},
        )
    page = logged_in_client.get(cluster.get_absolute_url()).content.decode()
    assert 'data-source="galera-flow"' in page and 'data-source="galera-queues"' in page
    flow = logged_in_client.get(cluster.get_absolute_url() + "?chart=flow&format=csv")
    text = flow.content.decode()
    assert "Paused by flow control" in text and "50" in text
    queues = logged_in_client.get(cluster.get_absolute_url() + "?chart=queues&format=csv")
    assert "Longest receive queue" in queues.content.decode()
    latency = logged_in_client.get(cluster.get_absolute_url() + "?chart=latency&format=csv")
    assert "0.5" in latency.content.decode()  # ms, the worst node

"""Flow control, queues, divergence and evictions judged between readings (pure), on outputs
recorded on the test cluster and published ones (fixtures/wsrep/readings)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from apps.galera.parse_push import pushed_result
from apps.galera.parse_wsrep import Delayed, WsrepStatus
from apps.galera.replication import Paused, Reading, Thresholds, judge, recv_queue_growing
from apps.galera.verdict import NodeResult, build_view, cluster_verdict
from apps.lib.status import Status
from tests.helpers import SHARED_FIXTURES

READINGS = SHARED_FIXTURES / "wsrep" / "readings"


def recorded(sample: str, name: str) -> NodeResult:
    status = (READINGS / f"{sample}.txt").read_text()
    options = READINGS / f"{sample}.options"
    return pushed_result(name, status, options.read_text() if options.exists() else "")


def reading(sample: str, name: str) -> Reading:
    result = recorded(sample, name)
    return Reading(name, result.status, result.options.evs_auto_evict if result.options else None)


def with_rows(node: Reading, **changes: str) -> Reading:
    rows = [*node.status.variables.items(), *((f"wsrep_{k}", v) for k, v in changes.items())]
    return replace(node, status=WsrepStatus.from_rows(rows))


# --- flow control --------------------------------------------------------------------------


def paused_cluster() -> list[Reading]:
    """node1 writing and node3 held by FLUSH TABLES WITH READ LOCK, as recorded."""
    return [
        reading("mariadb-10.11-flow-control-node1", "node1"),
        reading("mariadb-10.11-flow-control-node3", "node3"),
    ]


def test_it_warns_when_flow_control_paused_the_cluster_between_two_readings():
    found = judge(
        paused_cluster(),
        Thresholds(),
        flow_control={"node1": Paused(0.97, 61.0), "node3": Paused(0.981, 61.0)},
    )
    # node3 says it asks for the pause now (wsrep_flow_control_requested true).
    assert found.warning[0] == (
        "flow control paused replication 98% of the last 61 s (node1 97%, node3 98%); "
        "asked for by node3"
    )
    assert found.figures["flow_control_paused_share"] == 0.981


def test_a_flow_control_warning_tells_what_other_concerns_know_of_the_node_asking_for_it():
    found = judge(
        paused_cluster(),
        Thresholds(),
        flow_control={"node1": Paused(0.97, 61.0), "node3": Paused(0.981, 61.0)},
        notes={"node1": ["its gp2 volume a is fine"], "node3": ["its gp2 volume b is out"]},
    )
    assert found.warning[0].endswith("asked for by node3; its gp2 volume b is out")


def test_a_node_paused_long_ago_but_not_now_gets_no_flow_control_warning():
    # A lifetime average far above the threshold (a stall in the past), none of the last
    # interval paused: no warning. The 2018 rule warned on the average for days.
    node1 = with_rows(
        reading("mariadb-10.11-flow-control-node1", "node1"), flow_control_paused="0.6"
    )
    found = judge([node1], Thresholds(), flow_control={"node1": Paused(0.0, 60.0)})
    assert found.warning == []
    assert found.figures["flow_control_paused_share"] == 0.0


def test_a_node_paused_now_warns_however_low_its_lifetime_average():
    # Up for weeks, a one-minute stall barely moves the average (0.0818776 here).
    found = judge(paused_cluster()[:1], Thresholds(), flow_control={"node1": Paused(0.6, 60.0)})
    assert found.warning == ["flow control paused replication 60% of the last 60 s"]


def test_the_first_reading_of_the_counter_says_nothing_yet():
    assert judge(paused_cluster()[:1], Thresholds(), flow_control={}).warning == []


# --- queues --------------------------------------------------------------------------------


def test_a_receive_queue_long_on_two_readings_warns_and_a_burst_does_not():
    # node3 held: 34 write-sets waiting to be applied.
    held = [reading("mariadb-10.11-flow-control-node3", "node3")]
    found = judge(held, Thresholds(), recv_queue_history={"node3": [28]})
    assert "node3 receive queue 34 write-sets, 28 at the previous poll" in found.warning
    burst = judge(held, Thresholds(), recv_queue_history={"node3": [0]})
    assert not [w for w in burst.warning if "receive queue" in w]
    first = judge(held, Thresholds(), recv_queue_history={})
    assert not [w for w in first.warning if "receive queue" in w]


def test_a_send_queue_long_on_two_readings_warns():
    # node1's writers wait on the paused cluster: 4 write-sets to send.
    writer = [reading("mariadb-10.11-flow-control-node1", "node1")]
    assert judge(writer, Thresholds(), send_queue_history={"node1": [3]}).warning == []
    strict = Thresholds(send_queue=2)
    found = judge(writer, strict, send_queue_history={"node1": [3]})
    assert found.warning == ["node1 send queue 4 write-sets, 3 at the previous poll"]
    assert judge(writer, strict, send_queue_history={"node1": [None]}).warning == []


@pytest.mark.parametrize(
    ("values", "growing"),
    [
        ([0.5, 1.5, 4.0], True),
        ([0.0, 1.0, 4.0, 3.0], False),  # fell on the last poll
        ([0.1, 0.2, 0.3], False),  # rising, but still short of the floor
        ([0.5, None, 4.0], False),  # a gap is not growth
        ([1.5, 4.0], False),  # not enough history yet
        ([2.0, 2.0, 4.0], False),  # flat, then up: not a run
    ],
)
def test_it_calls_a_receive_queue_growing_only_when_it_rose_on_every_recent_poll(values, growing):
    assert recv_queue_growing(values, Thresholds()) is growing


# --- delayed and evicted members -----------------------------------------------------------


def test_it_names_the_members_a_published_node_finds_slow():
    osism = (READINGS / "osism-galera-25.3-two-delayed.txt").read_text()
    node = pushed_result("20-10", osism)
    assert node.status.evs_delayed == (
        Delayed("dd51fef5-c30d-11e7-a68b-0e08fa503a3b", "tcp://10.49.20.11:4567", 1),
        Delayed("e6249c55-c30d-11e7-a09a-9643934a39d2", "tcp://10.49.20.12:4567", 1),
    )
    verdict = cluster_verdict(build_view([node]))
    assert verdict.status is Status.WARNING
    assert verdict.reason == (
        "member dd51fef5 (tcp://10.49.20.11:4567) is slow to answer the group: on the delayed "
        "list of 20-10 (1 time); member e6249c55 (tcp://10.49.20.12:4567) is slow to answer the "
        "group: on the delayed list of 20-10 (1 time)"
    )


def test_it_gives_a_delayed_members_count_against_auto_eviction():
    node1 = reading("mariadb-10.11-delayed-node1", "node1")
    assert node1.auto_evict == 5
    found = judge([node1], Thresholds())
    assert found.warning == [
        "member 0412e952 (tcp://127.0.0.1:14663) is slow to answer the group: on the delayed "
        "list of node1 (3 times, evicted at 5 (evs.auto_evict))"
    ]
    # Named when the delayed member is one of the nodes Vigil reads.
    found = judge([node1], Thresholds(), names={"0412e952-e95f-11f1-b90d-9a111696e073": "node3"})
    assert found.warning[0].startswith("node3 is slow to answer the group")
    assert found.figures["delayed"] == {"node3": {"count": 3, "by": ["node1"]}}


def test_it_names_an_evicted_node_by_its_own_gcomm_uuid():
    results = [
        recorded("mariadb-10.11-evicted-node1", "node1"),
        recorded("mariadb-10.11-evicted-node2", "node2"),
        recorded("mariadb-10.11-evicted-node3", "node3"),
    ]
    verdict = cluster_verdict(build_view(results))
    assert verdict.status is Status.CRITICAL  # node3 is non-Primary
    assert (
        "node3 was evicted from the cluster (on the eviction list of node1, node2): it cannot "
        "rejoin until it restarts"
    ) in verdict.reason
    assert verdict.figures["evicted"] == {"node3": ["node1", "node2"]}


def test_a_node_listing_hundreds_of_members_gets_a_reason_a_person_can_read():
    uuids = [f"{i:08x}-0000-0000-0000-000000000000" for i in range(256)]
    delayed = ",".join(f"{uuid}:tcp://10.0.0.{i % 250}:4567:1" for i, uuid in enumerate(uuids))
    node = with_rows(
        reading("mariadb-10.11-synced", "node1"),
        evs_delayed=delayed,
        evs_evict_list=",".join(uuids[:7]),
    )
    found = judge([node], Thresholds())
    assert len(found.warning) == 6
    assert found.warning[-1] == "251 more members on delayed lists"
    assert len(found.critical) == 6
    assert found.critical[-1] == "2 more members evicted"
    assert len(found.figures["delayed"]) == 256 and len(found.figures["evicted"]) == 7

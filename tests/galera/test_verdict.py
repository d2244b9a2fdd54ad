"""The cluster view from all nodes' answers, and the verdict on it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from apps.galera.parse_push import pushed_result
from apps.galera.parse_wsrep import ProviderOptions, WsrepStatus, parse_status
from apps.galera.replication import Thresholds
from apps.galera.verdict import (
    NOT_GALERA,
    NodeResult,
    NodeState,
    build_view,
    cluster_verdict,
)
from apps.lib.status import Status
from tests.helpers import SHARED_FIXTURES

FIXTURES = SHARED_FIXTURES / "wsrep"
READINGS = FIXTURES / "readings"
UUID = "479ce105-1e65-11ed-b2c3-8ac44f1dd1c9"
# Three data nodes and a garbd, as MariaDB 10.11 reports them (garbd: the empty entry).
ADDRESSES = "127.0.0.1:13061,127.0.0.1:13062,127.0.0.1:13063,"


def node(name: str, weight: int | None = None, **changes: str) -> NodeResult:
    variables = {
        "wsrep_cluster_size": "4",
        "wsrep_cluster_status": "Primary",
        "wsrep_cluster_conf_id": "7",
        "wsrep_cluster_state_uuid": UUID,
        "wsrep_local_state": "4",
        "wsrep_local_state_comment": "Synced",
        "wsrep_ready": "ON",
        "wsrep_connected": "ON",
        "wsrep_flow_control_paused": "0.000000",
        "wsrep_local_recv_queue_avg": "0.000000",
        "wsrep_incoming_addresses": ADDRESSES,
        "wsrep_provider_name": "Galera",
        "wsrep_provider_version": "26.4.23(r7f6b7b2d)",
    }
    variables.update({f"wsrep_{key}": value for key, value in changes.items()})
    options = ProviderOptions(pc_weight=weight) if weight is not None else None
    return NodeResult(name, WsrepStatus.from_rows(variables.items()), options)


def down(name: str) -> NodeResult:
    return NodeResult(name, error="(2003) Can't connect to MySQL server on '127.0.0.1'")


def healthy() -> list[NodeResult]:
    return [node("node1"), node("node2"), node("node3")]


def test_it_sees_a_healthy_cluster_with_its_arbitrator():
    view = build_view(healthy())
    assert view.primary == ("node1", "node2", "node3")
    assert (view.cluster_size, view.data_nodes, view.arbitrators) == (4, 3, 1)
    assert view.members_seen == ("127.0.0.1:13061", "127.0.0.1:13062", "127.0.0.1:13063")
    assert (view.tolerance.one_by_one, view.tolerance.simultaneous) == (2, 1)
    assert not view.split_brain


def test_it_calls_a_healthy_cluster_ok_and_explains_the_headroom():
    verdict = cluster_verdict(build_view(healthy()), expected_data_nodes=3, expected_arbitrators=1)
    assert verdict.status is Status.OK
    assert verdict.reason == (
        "Primary, 3 data nodes + 1 arbitrator Synced; "
        "can lose 2 more nodes one at a time, 1 at once"
    )
    assert verdict.figures["one_by_one"] == 2
    assert verdict.figures["simultaneous"] == 1
    assert verdict.figures["cluster_size"] == 4


def test_it_infers_arbitrators_from_the_size_when_addresses_are_missing():
    results = [node(n, cluster_size="5", incoming_addresses="") for n in ("a", "b", "c")]
    view = build_view(results)
    assert (view.data_nodes, view.arbitrators) == (3, 2)


def test_it_counts_data_nodes_it_could_not_poll_from_the_incoming_addresses():
    # node3 is in the cluster but unreachable from the monitor: not an arbitrator.
    view = build_view([node("node1"), node("node2"), down("node3")])
    assert (view.data_nodes, view.arbitrators) == (3, 1)
    assert view.unreachable == ("node3",)
    verdict = cluster_verdict(view, expected_data_nodes=3, expected_arbitrators=1)
    assert verdict.status is Status.WARNING
    assert "node3 unreachable: (2003)" in verdict.reason


def test_it_warns_when_one_more_failure_stops_the_cluster():
    # 3 nodes + garbd after two kills one by one: node1 and garbd remain.
    results = [node("node1", cluster_size="2", incoming_addresses="127.0.0.1:13061,")]
    view = build_view([*results, down("node2"), down("node3")])
    verdict = cluster_verdict(view, expected_data_nodes=3, expected_arbitrators=1)
    assert verdict.status is Status.WARNING
    assert "one more failure stops the cluster" in verdict.reason
    assert "1 of 3 data nodes in the Primary component" in verdict.reason
    assert verdict.figures["one_by_one"] == 0
    assert verdict.figures["headroom"].startswith("cannot lose any more nodes")


def test_it_warns_when_the_cluster_is_smaller_than_expected():
    results = [node(n, cluster_size="3") for n in ("node1", "node2", "node3")]
    verdict = cluster_verdict(build_view(results), expected_data_nodes=3, expected_arbitrators=1)
    assert verdict.status is Status.WARNING
    assert verdict.reason == "0 of 1 arbitrators in the cluster"


def test_it_is_critical_when_quorum_is_lost():
    survivor = node(
        "node1",
        cluster_status="non-Primary",
        local_state_comment="Initialized",
        ready="OFF",
        cluster_size="1",
        cluster_conf_id="18446744073709551615",
    )
    view = build_view([survivor, down("node2"), down("node3")])
    assert view.non_primary == ("node1",)
    assert view.tolerance is None
    verdict = cluster_verdict(view)
    assert verdict.status is Status.CRITICAL
    assert "quorum lost" in verdict.reason
    assert "node1 is non-Primary, not Primary" in verdict.reason


@pytest.mark.parametrize(
    "sample", ["codership-non-primary-underscore.txt", "deimosfr-disconnected-no-peers.txt"]
)
def test_it_is_critical_for_published_non_primary_samples(sample):
    status = parse_status((FIXTURES / sample).read_text())
    status_with_provider = WsrepStatus.from_rows(
        [*status.variables.items(), ("wsrep_provider_name", "Galera")]
    )
    verdict = cluster_verdict(build_view([NodeResult("db1", status_with_provider)]))
    assert verdict.status is Status.CRITICAL


def test_it_is_critical_when_a_primary_node_is_not_ready():
    verdict = cluster_verdict(build_view([node("node1", ready="OFF"), node("node2")]))
    assert verdict.status is Status.CRITICAL
    assert "node1 is not ready (wsrep_ready OFF)" in verdict.reason


def test_it_only_warns_about_a_joining_node_that_is_not_ready_yet():
    joining = node("node3", ready="OFF", local_state_comment="Joined", local_state="3")
    verdict = cluster_verdict(build_view([node("node1"), node("node2"), joining]))
    assert verdict.status is Status.WARNING
    assert "node3 is Joined" in verdict.reason


def test_it_is_critical_when_no_node_is_reachable():
    verdict = cluster_verdict(build_view([down("node1"), down("node2")]))
    assert verdict.status is Status.CRITICAL
    error = "(2003) Can't connect to MySQL server on '127.0.0.1'"
    assert verdict.reason == f"no node reachable: node1: {error}; node2: {error}"


def test_it_is_critical_when_nothing_is_reachable_at_all():
    verdict = cluster_verdict(build_view([]))
    assert verdict.status is Status.CRITICAL


def test_it_reports_a_plain_mariadb_as_not_a_galera_node():
    sample = FIXTURES / "mariadb-kb-show-global-status-no-cluster.txt"
    plain = NodeResult("db1", parse_status(sample.read_text()))
    view = build_view([plain])
    assert view.nodes[0].state is NodeState.NOT_GALERA
    assert view.nodes[0].detail == NOT_GALERA
    verdict = cluster_verdict(view)
    assert verdict.status is Status.CRITICAL
    assert verdict.reason == f"no Galera node answered: db1 is {NOT_GALERA}"


def test_it_reports_a_server_without_wsrep_rows_as_not_a_galera_node():
    view = build_view([*healthy(), NodeResult("mysql8", WsrepStatus.from_rows([]))])
    assert view.not_galera == ("mysql8",)
    verdict = cluster_verdict(view)
    assert verdict.status is Status.WARNING
    assert f"mysql8 is {NOT_GALERA}" in verdict.reason


def test_it_warns_but_does_not_page_for_a_desynced_donor():
    donor = node("node2", local_state_comment="Donor/Desynced", local_state="2")
    verdict = cluster_verdict(build_view([node("node1"), donor, node("node3")]))
    assert verdict.status is Status.WARNING
    assert verdict.reason == "node2 is Donor/Desynced (a backup or state transfer is running)"


def test_it_falls_back_to_the_flow_control_average_only_for_a_node_without_the_counter():
    # Codership's sample has wsrep_flow_control_paused alone, as nodes before the _ns counter.
    sample = parse_status((FIXTURES / "codership-flow-control-paused.txt").read_text())
    paused = node("node1", flow_control_paused=str(sample.flow_control_paused))
    results = [paused, node("node2"), node("node3")]
    verdict = cluster_verdict(build_view(results))
    assert verdict.status is Status.WARNING
    assert verdict.reason == (
        "node1 paused by flow control 18% of the time since it started or its last FLUSH STATUS "
        "(wsrep_flow_control_paused, an average: it does not report wsrep_flow_control_paused_ns)"
    )
    lenient = cluster_verdict(build_view(results), thresholds=Thresholds(flow_control_paused=0.2))
    assert lenient.status is Status.OK
    # The same average beside the counter: the counter is judged, the average is not.
    counted = node("node1", flow_control_paused="0.184353", flow_control_paused_ns="9" * 12)
    assert cluster_verdict(build_view([counted, node("node2"), node("node3")])).status is Status.OK


def test_it_falls_back_to_the_receive_queue_average_only_for_a_node_without_the_queue_now():
    results = [node("node1", local_recv_queue_avg="42.5"), node("node2"), node("node3")]
    verdict = cluster_verdict(build_view(results))
    assert verdict.status is Status.WARNING
    assert verdict.reason == (
        "node1 receive queue averages 42.5 since it started or its last FLUSH STATUS "
        "(it does not report wsrep_local_recv_queue)"
    )
    now = node("node1", local_recv_queue_avg="42.5", local_recv_queue="0")
    assert cluster_verdict(build_view([now, node("node2"), node("node3")])).status is Status.OK


def test_it_flags_nodes_that_disagree_on_the_configuration_as_split_brain():
    results = [node("node1"), node("node2"), node("node3", cluster_conf_id="8")]
    view = build_view(results)
    assert view.split_brain
    assert view.primary == ("node1", "node2")
    verdict = cluster_verdict(view)
    assert verdict.status is Status.CRITICAL
    assert "possible split-brain" in verdict.reason
    assert "disagree on cluster_conf_id" in verdict.reason


def test_it_flags_two_primary_components_with_different_histories_as_split_brain():
    other = "625318e2-9e1c-11e7-9d07-aee70d98d8ac"
    results = [
        node("node1", cluster_size="2"),
        node("node2", cluster_size="2"),
        node("node3", cluster_size="1", cluster_state_uuid=other, cluster_conf_id="1"),
    ]
    verdict = cluster_verdict(build_view(results))
    assert verdict.status is Status.CRITICAL
    assert "disagree on cluster_state_uuid" in verdict.reason
    assert "2 Primary components" in verdict.reason
    assert verdict.figures["split_brain"] is True


def test_it_uses_the_weights_the_nodes_report():
    # node1 carries weight 3 of 6 (with garbd): losing it alone stops the cluster.
    results = [node("node1", weight=3), node("node2", weight=1), node("node3", weight=1)]
    view = build_view(results)
    assert (view.tolerance.one_by_one, view.tolerance.simultaneous) == (0, 0)
    verdict = cluster_verdict(view)
    assert verdict.status is Status.WARNING
    assert verdict.reason == "one more failure stops the cluster"


def test_it_puts_every_node_state_in_the_figures():
    verdict = cluster_verdict(build_view([node("node1"), node("node2"), down("node3")]))
    assert verdict.figures["nodes"]["node1"] == {"state": "primary", "detail": "Synced"}
    assert verdict.figures["nodes"]["node3"]["state"] == "unreachable"
    assert verdict.figures["unreachable"] == ["node3"]


def test_a_split_brain_seen_once_does_not_change_the_status_until_seen_again():
    view = build_view([node("node1", cluster_conf_id="8"), node("node2"), node("node3")])
    first = cluster_verdict(view, split_brain_before=False)
    assert first.status is Status.OK
    assert first.figures["split_brain"] and not first.figures["split_brain_confirmed"]
    second = cluster_verdict(view, split_brain_before=True)
    assert second.status is Status.CRITICAL
    assert second.figures["split_brain_confirmed"]


def test_it_warns_about_a_growing_receive_queue_with_the_history_passed_in():
    view = build_view([node("node1"), node("node2", local_recv_queue="4"), node("node3")])
    verdict = cluster_verdict(view, recv_queue_history={"node2": [0, 2]})
    assert verdict.status is Status.WARNING
    assert verdict.reason == "node2 receive queue growing: 0 → 2 → 4"


# --- wsrep_connected, pushing nodes that fell silent, certification failures ---------------


def cut_off(name: str) -> NodeResult:
    """A node whose group link is cut, as MariaDB 10.11 reports it (seen on the test cluster)."""
    return node(
        name,
        connected="OFF",
        cluster_status="Disconnected",
        ready="OFF",
        local_state_comment="Initialized",
        cluster_size="0",
        incoming_addresses="",
    )


def test_it_is_critical_for_a_node_cut_from_the_group():
    survivors = [
        node(n, cluster_size="3", incoming_addresses="127.0.0.1:13061,127.0.0.1:13062,")
        for n in ("node1", "node2")
    ]
    view = build_view([*survivors, cut_off("node3")])
    assert view.disconnected == ("node3",)
    assert view.nodes[2].state is NodeState.DISCONNECTED
    verdict = cluster_verdict(view, expected_data_nodes=3, expected_arbitrators=1)
    assert verdict.status is Status.CRITICAL
    assert "node3 is cut from the group (wsrep_connected=OFF, Disconnected)" in verdict.reason
    assert verdict.figures["disconnected"] == ["node3"]
    assert verdict.figures["data_nodes"] == 2


def test_it_counts_a_cut_node_the_others_still_count_as_lost_in_the_headroom():
    # The others' view still lists node3 (they have not evicted it yet, or their report is
    # older than node3's): it must not count as a member that can still fail.
    view = build_view([node("node1"), node("node2"), cut_off("node3")])
    assert view.data_nodes == 2
    assert (view.tolerance.one_by_one, view.tolerance.simultaneous) == (1, 1)
    two_of_three = build_view([node("node1"), cut_off("node2"), cut_off("node3")])
    assert (two_of_three.tolerance.one_by_one, two_of_three.tolerance.simultaneous) == (0, 0)


def silent(name: str) -> NodeResult:
    return NodeResult(name, error="no report since 2026-01-01 12:00 UTC", silent=True)


def test_a_pushing_node_that_stopped_reporting_is_unknown_and_warns():
    view = build_view([node("node1"), node("node2"), silent("node3")])
    assert view.nodes[2].state is NodeState.SILENT
    verdict = cluster_verdict(view, expected_data_nodes=3)
    assert verdict.status is Status.WARNING
    assert "node3 unknown: no report since 2026-01-01 12:00 UTC" in verdict.reason


def test_a_cluster_whose_every_node_stopped_reporting_is_unknown():
    verdict = cluster_verdict(build_view([silent("node1"), silent("node2")]))
    assert verdict.status is Status.UNKNOWN
    assert verdict.reason.startswith("no report from any node: node1: no report since")


@pytest.mark.parametrize(
    ("rates", "status"),
    [
        ({"node1": 4.0, "node2": 5.5, "node3": None}, Status.OK),
        ({"node1": 4.0, "node2": 6.0, "node3": 0.0}, Status.WARNING),
        ({}, Status.OK),
    ],
)
def test_it_warns_when_certification_failures_a_minute_reach_the_threshold(rates, status):
    verdict = cluster_verdict(
        build_view(healthy()),
        thresholds=Thresholds(cert_failures_per_minute=10.0),
        cert_failure_rates=rates,
    )
    assert verdict.status is status
    if status is Status.WARNING:
        assert "10.0 certification failures a minute (node1 4.0, node2 6.0)" in verdict.reason
    known = [rate for rate in rates.values() if rate is not None]
    assert verdict.figures["cert_failures_per_minute"] == (sum(known) if known else None)


def test_an_older_pushed_reading_of_the_previous_view_is_not_a_second_component():
    # node3 pushed 40 s ago, before node4 left (conf_id 7); node1 and node2 were read now (8).
    now = 1_800_000_000.0
    fresh = [
        replace(node(n, cluster_conf_id="8", cluster_size="3"), read_at=now)
        for n in ("node1", "node2")
    ]
    stale = replace(node("node3", cluster_conf_id="7"), read_at=now - 40)
    view = build_view([*fresh, stale])
    assert not view.split_brain
    assert view.primary == ("node1", "node2")
    assert view.cluster_size == 3
    # Read at the same moment, the same disagreement is a possible split-brain.
    same_time = build_view([*fresh, replace(stale, read_at=now)])
    assert same_time.split_brain


# --- wsrep_cluster_weight, divergence, desync count (real samples: fixtures/wsrep/readings) -


def recorded(sample: str, name: str) -> NodeResult:
    """A node's status and provider options as recorded on the test cluster."""
    status = (READINGS / f"{sample}.txt").read_text()
    return pushed_result(name, status, (READINGS / f"{sample}.options").read_text())


def test_the_cluster_weight_of_default_weights_changes_nothing():
    view = build_view([recorded("mariadb-10.11-synced", "node1")])
    assert (view.cluster_weight, view.data_nodes, view.arbitrators) == (4, 3, 1)
    assert [m.weight for m in view.weights] == [1, 1, 1, 1]
    assert view.weight_note is None
    verdict = cluster_verdict(view)
    assert verdict.reason.endswith("can lose 2 more nodes one at a time, 1 at once")
    assert verdict.figures["cluster_weight"] == 4


def test_the_cluster_weight_reveals_a_heavy_member_vigil_does_not_read():
    # node1 weighs 3 (pc.weight=3 at runtime); Vigil reads node2 alone: 6 in all, 1 of it
    # node2's. Counting the others 1 each said "can lose 2 one at a time, 1 at once".
    view = build_view([recorded("mariadb-10.11-weight-3-node2", "node2")])
    assert view.cluster_weight == 6
    assert (view.tolerance.one_by_one, view.tolerance.simultaneous) == (0, 0)
    verdict = cluster_verdict(view, expected_data_nodes=1, expected_arbitrators=1)
    assert verdict.status is Status.WARNING
    assert verdict.reason == (
        "one more failure stops the cluster (garbd, 2 nodes Vigil does not poll hold 5 of the "
        "weight 6 together (wsrep_cluster_weight), not 1 each: the headroom assumes one of them "
        "holds it all)"
    )


def test_weights_read_from_the_nodes_and_the_cluster_weight_agree():
    view = build_view(
        [
            recorded("mariadb-10.11-weight-3-node1", "node1"),
            recorded("mariadb-10.11-weight-3-node2", "node2"),
        ]
    )
    # 6 = node1's 3 + node2's 1 + one each for node3 (not polled) and garbd.
    assert [(m.name, m.weight) for m in view.weights] == [
        ("node1", 3),
        ("node2", 1),
        ("unpolled0", 1),
        ("garbd0", 1),
    ]
    assert view.weight_note is None
    assert (view.tolerance.one_by_one, view.tolerance.simultaneous) == (0, 0)


def test_a_cluster_weight_below_the_weights_read_is_not_used():
    results = [node(n, weight=1, cluster_weight="2") for n in ("node1", "node2", "node3")]
    view = build_view(results)
    assert view.weight_note == (
        "wsrep_cluster_weight 2 is less than the pc.weight the nodes report: not used"
    )
    assert (view.tolerance.one_by_one, view.tolerance.simultaneous) == (2, 1)


def with_rows(result: NodeResult, **changes: str) -> NodeResult:
    rows = [*result.status.variables.items()]
    rows += [(f"wsrep_{key}", value) for key, value in changes.items()]
    return replace(result, status=WsrepStatus.from_rows(rows))


# The state UUID of the second recording's cluster: a history the first one never had.
OTHER_HISTORY = "00375fa2-e95f-11f1-b527-e2f097370df1"


def test_a_synced_node_whose_state_is_not_the_clusters_has_diverged():
    # No published or reproducible output shows it (a MariaDB joiner takes no query before its
    # state transfer): node3's recorded rows, with the state UUID of the other recording.
    diverged = with_rows(recorded("mariadb-10.11-synced", "node3"), local_state_uuid=OTHER_HISTORY)
    results = [recorded("mariadb-10.11-synced", "node1"), diverged]
    verdict = cluster_verdict(build_view(results))
    assert verdict.status is Status.CRITICAL
    assert verdict.reason == (
        "node3 has diverged from the cluster: its state 00375fa2… is not the cluster's e1c528fe…"
    )
    joining = with_rows(diverged, local_state_comment="Joiner", local_state="1")
    verdict = cluster_verdict(build_view([results[0], joining]))
    assert verdict.status is Status.WARNING
    assert "node3 waits for a state transfer: its state 00375fa2… is not" in verdict.reason


def test_a_desynced_node_says_how_many_operations_hold_it():
    held = recorded("mariadb-10.11-flow-control-node3", "node3")
    assert held.status.desync_count == 1
    verdict = cluster_verdict(build_view([recorded("mariadb-10.11-synced", "node1"), held]))
    assert (
        "node3 is Donor/Desynced (a backup or state transfer is running; wsrep_desync_count 1)"
        in verdict.reason
    )

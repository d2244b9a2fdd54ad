"""The MySQL adapter and the cluster view against a real Galera cluster on loopback.

Failures are real: nodes are killed with SIGKILL or stopped cleanly by PID, and every
wait polls through the adapter until the view has settled (survivors keep reporting the
old size until the failure has been detected).
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator

import pymysql
import pytest

from apps.galera.mysql import NodeAddress, poll_node, poll_nodes
from apps.galera.verdict import NOT_GALERA, ClusterView, NodeState, build_view, cluster_verdict
from apps.lib.status import Status, Verdict
from tests.services import wait_for
from tests.services.galera import MONITOR_PASSWORD, MONITOR_USER, GaleraCluster
from tests.services.mysql_recorder import SALT, MysqlRecorder

PLAIN_MARIADB = ("127.0.0.1", 3306)  # the machine's standalone MariaDB: no wsrep provider


def poll(cluster: GaleraCluster) -> ClusterView:
    addresses = [NodeAddress("127.0.0.1", node.sql_port, node.name) for node in cluster.nodes]
    return build_view(poll_nodes(addresses, MONITOR_USER, MONITOR_PASSWORD))


def verdict_of(view: ClusterView) -> Verdict:
    return cluster_verdict(view, expected_data_nodes=3, expected_arbitrators=1)


def settle(cluster: GaleraCluster, what: str, done: Callable[[ClusterView], bool]) -> ClusterView:
    """Poll through the adapter until ``done(view)``; fail naming the last verdict."""
    seen: list[ClusterView] = []

    def check() -> ClusterView | None:
        view = poll(cluster)
        seen[:] = [view]
        # Survivors learn of a failure a moment apart: wait until they agree, too.
        return view if done(view) and not view.split_brain else None

    try:
        return wait_for(check, 60, what, retry_on=(Exception,))
    except Exception as error:
        last = verdict_of(seen[0]) if seen else None
        raise AssertionError(f"{error}; last verdict: {last}") from None


def test_it_reads_a_healthy_cluster_through_a_user_with_usage_only(galera):
    with galera.nodes[0].admin() as connection, connection.cursor() as cursor:
        cursor.execute(f"SHOW GRANTS FOR '{MONITOR_USER}'@'%'")
        grants = [row[0] for row in cursor.fetchall()]
    assert len(grants) == 1
    assert grants[0].startswith(f"GRANT USAGE ON *.* TO `{MONITOR_USER}`@`%`")

    view = poll(galera)
    verdict = verdict_of(view)
    assert verdict.status is Status.OK, verdict.reason
    assert view.primary == ("node1", "node2", "node3")
    assert (view.cluster_size, view.data_nodes, view.arbitrators) == (4, 3, 1)
    assert (view.tolerance.one_by_one, view.tolerance.simultaneous) == (2, 1)
    assert verdict.reason.endswith("can lose 2 more nodes one at a time, 1 at once")
    assert set(view.members_seen) == {f"127.0.0.1:{node.sql_port}" for node in galera.nodes}


def test_it_reads_the_provider_options_of_a_live_node(galera):
    result = poll_node("127.0.0.1", galera.nodes[0].sql_port, MONITOR_USER, MONITOR_PASSWORD)
    assert result.error is None
    assert result.options.pc_weight == 1
    assert result.options.evs_suspect_timeout == 2.0  # the harness lowers it from PT5S
    assert result.status.provider_name == "Galera"
    assert result.status.local_state_comment == "Synced"
    assert result.status.wsrep_rows > 40


def test_it_keeps_a_primary_cluster_after_losing_one_node_with_garbd(galera):
    galera.kill(galera.node("node3"))
    view = settle(galera, "size 3 after one kill", lambda v: v.cluster_size == 3)
    verdict = verdict_of(view)
    assert view.primary == ("node1", "node2")
    assert view.unreachable == ("node3",)
    assert (view.data_nodes, view.arbitrators) == (2, 1)
    assert (view.tolerance.one_by_one, view.tolerance.simultaneous) == (1, 1)
    assert verdict.status is Status.WARNING
    assert "2 of 3 data nodes in the Primary component" in verdict.reason
    assert "node3 unreachable: (2003)" in verdict.reason


@pytest.mark.parametrize("how", ["kill", "stop"], ids=["killed", "stopped cleanly"])
def test_two_nodes_gone_one_after_the_other_leave_node1_primary_with_zero_headroom(galera, how):
    """Killed (the second once the first was seen) or stopped cleanly: the survivor and garbd
    stay the Primary component, one more failure from stopping."""
    gone = getattr(galera, how)
    gone(galera.node("node3"))
    settle(galera, f"size 3 after the first {how}", lambda v: v.cluster_size == 3)
    gone(galera.node("node2"))
    view = settle(galera, f"size 2 after the second {how}", lambda v: v.cluster_size == 2)
    verdict = verdict_of(view)
    assert view.primary == ("node1",)
    assert view.non_primary == ()
    assert (view.data_nodes, view.arbitrators) == (1, 1)
    assert (view.tolerance.one_by_one, view.tolerance.simultaneous) == (0, 0)
    assert verdict.status is Status.WARNING
    assert "one more failure stops the cluster" in verdict.reason
    assert verdict.figures["one_by_one"] == 0


def test_it_warns_but_does_not_page_for_a_desynced_node(galera):
    node2 = galera.node("node2")
    node2.execute("SET GLOBAL wsrep_desync=ON")
    try:
        view = settle(
            galera,
            "node2 Donor/Desynced",
            lambda v: (
                v.nodes[1].status is not None
                and v.nodes[1].status.local_state_comment == "Donor/Desynced"
            ),
        )
    finally:
        node2.execute("SET GLOBAL wsrep_desync=OFF")
    verdict = verdict_of(view)
    assert verdict.status is Status.WARNING
    assert verdict.reason == (
        "node2 is Donor/Desynced (a backup or state transfer is running; wsrep_desync_count 1)"
    )


def test_it_sees_a_restarted_node_rejoin_as_synced(galera):
    node3 = galera.node("node3")
    galera.kill(node3)
    settle(galera, "size 3 after the kill", lambda v: v.cluster_size == 3)
    galera.start_node(node3)
    view = settle(
        galera,
        "node3 Synced again",
        lambda v: v.cluster_size == 4 and v.nodes[2].detail == "Synced",
    )
    verdict = verdict_of(view)
    assert verdict.status is Status.OK, verdict.reason
    assert view.primary == ("node1", "node2", "node3")


def test_it_is_critical_when_two_nodes_die_at_once_without_garbd(galera):
    galera.kill_garbd()
    settle(galera, "size 3 without garbd", lambda v: v.cluster_size == 3 and not v.arbitrators)
    galera.kill(galera.node("node2"))
    galera.kill(galera.node("node3"))
    view = settle(galera, "node1 non-Primary", lambda v: v.non_primary == ("node1",))
    verdict = verdict_of(view)
    survivor = view.nodes[0]
    assert survivor.state is NodeState.NON_PRIMARY
    assert survivor.status.cluster_status == "non-Primary"
    assert survivor.status.ready == "OFF"
    assert survivor.status.cluster_conf_id == "18446744073709551615"
    assert view.tolerance is None
    assert verdict.status is Status.CRITICAL
    assert "quorum lost: no node is in a Primary component" in verdict.reason
    assert "node1 is non-Primary, not Primary" in verdict.reason


def test_it_reports_a_plain_mariadb_as_not_a_galera_node():
    result = poll_node(*PLAIN_MARIADB, "root", "")
    assert result.error is None
    view = build_view([result])
    assert view.nodes[0].state is NodeState.NOT_GALERA
    verdict = cluster_verdict(view)
    assert verdict.status is Status.CRITICAL
    assert verdict.reason == f"no Galera node answered: 127.0.0.1:3306 is {NOT_GALERA}"


def test_it_shows_the_servers_message_for_wrong_credentials(galera):
    result = poll_node("127.0.0.1", galera.nodes[0].sql_port, MONITOR_USER, "wrong")
    assert result.status is None
    assert result.error == (
        f"(1045) Access denied for user '{MONITOR_USER}'@'127.0.0.1' (using password: YES)"
    )
    assert build_view([result]).unreachable == (f"127.0.0.1:{galera.nodes[0].sql_port}",)


@pytest.fixture
def black_hole() -> Iterator[int]:
    """A port that accepts TCP connections but never says a word."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


def test_a_black_holed_or_refused_node_does_not_stop_the_others_from_being_read(black_hole):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as closed:
        closed.bind(("127.0.0.1", 0))
        refused_port = closed.getsockname()[1]
    results = poll_nodes(
        [("127.0.0.1", black_hole), ("127.0.0.1", refused_port), PLAIN_MARIADB],
        "root",
        "",
        connect_timeout=0.5,
        read_timeout=0.5,
    )
    hole, refused, plain = results
    assert hole.status is None
    assert "timed out" in hole.error
    assert refused.status is None
    assert refused.error.startswith("(2003) Can't connect to MySQL server")
    assert plain.error is None
    assert plain.status.wsrep_rows > 0


def test_it_polls_each_node_with_its_own_credentials():
    results = poll_nodes(
        [
            NodeAddress(*PLAIN_MARIADB, name="right"),
            NodeAddress(*PLAIN_MARIADB, name="wrong", user="vigil_nobody", password="x"),
        ],
        "root",
        "",
    )
    assert [result.name for result in results] == ["right", "wrong"]
    assert results[0].error is None
    assert results[1].error.startswith("(1045) Access denied for user 'vigil_nobody'")


# --- The password never leaves for a server that asks for it in a way we refuse --------------

SECRET = "PLANTED-monitor-password-1b2"


@pytest.mark.parametrize(
    ("plugin", "then", "refused"),
    [
        ("mysql_native_password", ("switch", "mysql_clear_password", b""), "mysql_clear_password"),
        ("mysql_native_password", ("switch", "dialog", b"\x04Password: "), "dialog"),
        ("mysql_native_password", ("switch", "sha256_password", SALT + b"\x00"), "sha256"),
        ("sha256_password", None, None),  # answered with a scramble, never the password
        ("caching_sha2_password", ("full-auth",), "caching_sha2_password"),
    ],
)
def test_it_never_sends_the_password_to_a_server_that_asks_for_it(plugin, then, refused):
    server = MysqlRecorder(plugin=plugin, then=then)
    try:
        result = poll_node("127.0.0.1", server.port, "vigil_monitor", SECRET, connect_timeout=2)
    finally:
        server.close()
    assert SECRET.encode() not in server.everything
    assert len(server.received) == 1
    if refused:
        assert f"refused the server's {refused}" in result.error
    else:
        assert "Access denied (recorder)" in result.error


def test_the_recorder_would_see_plain_pymysqls_cleartext_password():
    """The control: without the guard, PyMySQL answers the switch with the password."""
    server = MysqlRecorder(then=("switch", "mysql_clear_password", b""))
    try:
        with pytest.raises(pymysql.err.OperationalError):
            pymysql.connect(
                host="127.0.0.1", port=server.port, user="u", password=SECRET, connect_timeout=2
            )
    finally:
        server.close()
    assert SECRET.encode() + b"\x00" in server.everything

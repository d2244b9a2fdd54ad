"""The shipped agent, agents/vigil-galera-push itself (downloaded from the cluster page), on the
real 3-node cluster plus garbd: it reads each node through the real ``mariadb`` client over the
node's socket and pushes to a running Vigil over HTTP, in a cluster that mixes a polled node with
pushing ones. Then the signals, produced for real: a node cut from the group
(``wsrep_cluster_address=''``: it leaves the group, wsrep_connected=OFF), certification
conflicts (two nodes committing an update of one row at the same moment) and flow control (a
node held by ``FLUSH TABLES WITH READ LOCK`` while another writes). Polls are counted, never
timed: each waits for what the cluster says, not for the clock.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pymysql
import pytest
from prometheus_client.parser import text_string_to_metric_families

from apps.galera import tasks
from apps.galera.models import Cluster, Node
from apps.prometheus.collector import render
from tests.services import wait_for
from tests.services.galera import NOT_YET, GaleraCluster
from tests.services.galera import Node as ClusterNode

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def cluster(watch_galera, settings, live_server) -> Cluster:
    """node1 polled by Vigil, node2 and node3 pushing; Vigil's URL is the live server's."""
    settings.VIGIL_BASE_URL = live_server.url
    return watch_galera("mixed", pushing=("node2", "node3"))


@pytest.fixture
def agents(cluster: Cluster, galera: GaleraCluster, admin_client, tmp_path: Path):
    """``push(name)`` runs the agent of a pushing node: the script as the node's page serves it
    (Vigil's URL and the node's id filled in), a settings file with the token the page showed
    once, and the node's socket as root (unix_socket authentication, as on a real node)."""
    scripts = {}
    for node in cluster.nodes.filter(mode=Node.Mode.PUSH):
        page = admin_client.post(f"/galera/nodes/{node.pk}/token").content.decode()
        token = page.split('<code class="secret">')[1].split("</code>")[0]
        script = tmp_path / node.name / "vigil-galera-push"
        script.parent.mkdir()
        download = admin_client.get(f"/galera/nodes/{node.pk}/agent/vigil-galera-push")
        assert download["Content-Disposition"] == 'attachment; filename="vigil-galera-push"'
        script.write_bytes(download.content)
        script.chmod(0o755)
        config = script.parent / "settings"
        socket = galera.node(node.name).socket
        config.write_text(
            f"VIGIL_TOKEN={token}\nVIGIL_MYSQL_OPTIONS='--socket={socket} --user=root'\n"
        )
        scripts[node.name] = (script, config)

    def push(name: str) -> subprocess.CompletedProcess:
        script, config = scripts[name]
        env = {"PATH": os.environ["PATH"], "VIGIL_CONFIG": str(config)}
        done = subprocess.run([str(script)], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "vgn_" not in done.stderr + done.stdout
        return done

    return push


@pytest.fixture
def admin_client(client, django_user_model):
    """A superuser: the Admin group of the data migration is gone in a transactional test."""
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.com"))
    return client


def scrape() -> dict[str, dict[tuple, float]]:
    body, _ = render()
    return {
        family.name: {tuple(sorted(s.labels.items())): s.value for s in family.samples}
        for family in text_string_to_metric_families(body.decode())
    }


def test_a_mixed_cluster_of_polled_and_pushing_nodes_is_judged_as_one(
    galera: GaleraCluster, cluster: Cluster, agents, admin_client
):
    agents("node2")
    agents("node3")
    node3 = cluster.nodes.get(name="node3")
    assert (node3.state, node3.detail) == ("primary", "Synced")  # the push's own reading
    assert "wsrep_local_state_comment\tSynced" in node3.report_status

    assert tasks.poll_cluster(cluster.pk) == "ok", Cluster.objects.get(pk=cluster.pk).reason
    cluster.refresh_from_db()
    assert (cluster.cluster_size, cluster.data_nodes, cluster.arbitrators) == (4, 3, 1)
    assert (cluster.one_by_one, cluster.simultaneous) == (2, 1)
    assert cluster.suspect_timeout_s == 2.0  # node2's and node3's pushed provider options
    snapshot = cluster.snapshots.get()
    assert {name: facts["state"] for name, facts in snapshot.nodes.items()} == dict.fromkeys(
        ("node1", "node2", "node3"), "primary"
    )
    page = admin_client.get(f"/galera/clusters/{cluster.pk}/").content.decode()
    assert page.count("pushes<br>") == 2 and "polled</td>" in page
    assert "Can lose 2 more nodes one at a time, 1 at once." in page


def test_a_node_cut_from_the_group_is_critical_and_lost_from_the_headroom(
    galera: GaleraCluster, cluster: Cluster, agents, admin_client
):
    agents("node2")
    agents("node3")
    assert tasks.poll_cluster(cluster.pk) == "ok"
    node3 = galera.node("node3")
    node3.execute("SET GLOBAL wsrep_cluster_address=''")  # leaves the group for real
    try:
        _wait_disconnected(node3)
        for survivor in (galera.node("node1"), galera.node("node2")):
            _wait_view_without_node3(survivor)  # else a poll may read the view change half done
        agents("node3")  # it still answers locally, and says it is cut off
        agents("node2")
        assert tasks.poll_cluster(cluster.pk) == "critical"
        cluster.refresh_from_db()
        assert "node3 is cut from the group (wsrep_connected=OFF, Disconnected)" in cluster.reason
        assert cluster.data_nodes == 2
        assert (cluster.one_by_one, cluster.simultaneous) == (1, 1)
        assert cluster.nodes.get(name="node3").state == "disconnected"
        page = admin_client.get(f"/galera/clusters/{cluster.pk}/").content.decode()
        assert "<strong>cut from the group</strong>" in page
        assert "wsrep_connected=OFF" in page
    finally:
        reconnect(galera, node3)


def reconnect(galera: GaleraCluster, node: ClusterNode) -> None:
    """Give the node its group back (it rejoins by IST; the statement waits for that), or, if
    it cannot, restart it: the cluster is shared with the other tests."""
    try:
        connection = pymysql.connect(
            unix_socket=str(node.socket), user="root", connect_timeout=5, read_timeout=90
        )
        with connection, connection.cursor() as cursor:
            cursor.execute(f"SET GLOBAL wsrep_cluster_address='{galera.gcomm_address}'")
        galera.wait_synced(node)
    except Exception:
        galera.kill(node)
        galera.rejoin(node)
    galera.wait_size(4)


def _wait_view_without_node3(node: ClusterNode) -> None:
    def settled() -> bool:
        status = node.status()
        return status.get("wsrep_cluster_size") == "3" and (
            status.get("wsrep_cluster_status"),
            status.get("wsrep_local_state_comment"),
        ) == ("Primary", "Synced")

    wait_for(settled, 30, f"{node.name} to be Primary and Synced in a group of 3")


def _wait_disconnected(node: ClusterNode) -> None:
    wait_for(
        lambda: node.status().get("wsrep_connected") == "OFF",
        30,
        f"{node.name} to be disconnected",
        retry_on=NOT_YET,
    )


def conflicting_commits(galera: GaleraCluster, rounds: int = 40) -> None:
    """Two nodes update one row in open transactions, then commit at the same moment: one of
    each pair fails certification (or is aborted by the other's write set)."""
    admin = pymysql.connect(
        unix_socket=str(galera.node("node1").socket), user="root", autocommit=True
    )
    with admin, admin.cursor() as cursor:
        cursor.execute("CREATE DATABASE IF NOT EXISTS vigil_conflicts")
        cursor.execute(
            "CREATE TABLE IF NOT EXISTS vigil_conflicts.hot (id INT PRIMARY KEY, n INT) "
            "ENGINE=InnoDB"
        )
        cursor.execute("INSERT INTO vigil_conflicts.hot VALUES (1, 0) ON DUPLICATE KEY UPDATE n=0")
    connections = [
        pymysql.connect(unix_socket=str(galera.node(name).socket), user="root", autocommit=False)
        for name in ("node2", "node3")
    ]
    for connection in connections:  # each sees the row before it updates it
        with connection.cursor() as cursor:
            cursor.execute("SET SESSION wsrep_sync_wait = 7")

    def commit(connection: pymysql.connections.Connection, start: threading.Barrier) -> None:
        start.wait()
        try:
            connection.commit()
        except pymysql.err.OperationalError:  # 1213 deadlock: the loser of the pair
            connection.rollback()

    try:
        for _ in range(rounds):
            for connection in connections:
                with connection.cursor() as cursor:
                    cursor.execute("UPDATE vigil_conflicts.hot SET n = n + 1 WHERE id = 1")
            start = threading.Barrier(len(connections))
            threads = [threading.Thread(target=commit, args=(c, start)) for c in connections]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        for connection in connections:
            connection.close()


def test_certification_conflicts_on_purpose_show_as_a_rate(
    galera: GaleraCluster, cluster: Cluster, agents, admin_client, settings
):
    settings.VIGIL_GALERA_CERT_FAILURES_PER_MINUTE = 1.0
    agents("node2")
    agents("node3")
    assert tasks.poll_cluster(cluster.pk) == "ok"
    before = {
        name: int(galera.node(name).status()["wsrep_local_cert_failures"])
        for name in ("node2", "node3")
    }
    conflicting_commits(galera)
    after = {
        name: int(galera.node(name).status()["wsrep_local_cert_failures"])
        for name in ("node2", "node3")
    }
    assert sum(after.values()) > sum(before.values()), "no certification failure produced"
    agents("node2")
    agents("node3")
    assert tasks.poll_cluster(cluster.pk) == "warning"
    cluster.refresh_from_db()
    assert cluster.cert_failures_per_minute > 1.0
    assert "certification failures a minute" in cluster.reason
    snapshot = cluster.snapshots.first()
    rates = {name: snapshot.nodes[name]["cert_failures_per_minute"] for name in snapshot.nodes}
    assert rates["node1"] == 0.0  # polled, no conflict of its own
    assert max(rates["node2"], rates["node3"]) > 0

    page = admin_client.get(f"/galera/clusters/{cluster.pk}/").content.decode()
    assert "a minute, all nodes" in page
    assert 'class="galera-cert-rate"' in page
    api = admin_client.get(f"/api/galera/clusters/{cluster.pk}/").json()
    assert api["cert_failures_per_minute"] == pytest.approx(cluster.cert_failures_per_minute)
    metric = scrape()["vigil_galera_cert_failures_per_minute"]
    assert list(metric.values()) == [pytest.approx(cluster.cert_failures_per_minute)]


# --- flow control: a node held by FLUSH TABLES WITH READ LOCK while another writes ----------


def paused_ns(node: ClusterNode) -> int:
    return int(node.status()["wsrep_flow_control_paused_ns"])


@contextmanager
def held_while_writing(galera: GaleraCluster) -> Iterator[threading.Event]:
    """node3 held by FLUSH TABLES WITH READ LOCK while node1 inserts, until the block ends
    (writes stop first, then UNLOCK TABLES). MariaDB desyncs a node that holds the lock, and a
    desynced node sends no flow control unless gcs.sync_donor=YES (Galera's gcs/src/gcs.cpp):
    set on node3 here, as on a cluster that keeps in step with its donors, and set back after."""
    node1, node3 = galera.node("node1"), galera.node("node3")
    node1.execute("CREATE DATABASE IF NOT EXISTS vigil_flow")
    node1.execute(
        "CREATE TABLE IF NOT EXISTS vigil_flow.w (id INT AUTO_INCREMENT PRIMARY KEY, v CHAR(8))"
    )
    galera.wait_synced(node3)  # the table exists there too
    stop = threading.Event()
    writing = threading.Event()

    def write() -> None:
        connection = pymysql.connect(
            unix_socket=str(node1.socket), user="root", autocommit=True, read_timeout=300
        )
        with connection, connection.cursor() as cursor:
            while not stop.is_set():
                cursor.execute("INSERT INTO vigil_flow.w (v) VALUES ('x')")
                writing.set()

    node3.execute("SET GLOBAL wsrep_provider_options='gcs.sync_donor=YES'")
    hold = node3.admin()
    writer = threading.Thread(target=write, daemon=True)
    try:
        with hold.cursor() as cursor:
            cursor.execute("FLUSH TABLES WITH READ LOCK")
        writer.start()
        wait_for(writing.is_set, 30, "node1 to write")
        yield stop
    finally:
        stop.set()
        with hold.cursor() as cursor:
            cursor.execute("UNLOCK TABLES")
        hold.close()
        writer.join(timeout=120)
        node3.execute("SET GLOBAL wsrep_provider_options='gcs.sync_donor=NO'")


def test_a_held_node_pauses_the_cluster_and_vigil_says_so_within_two_polls(
    galera: GaleraCluster, cluster: Cluster, agents, admin_client
):
    node1 = galera.node("node1")

    def poll() -> str:
        agents("node2")
        agents("node3")
        return tasks.poll_cluster(cluster.pk)

    assert poll() == "ok"  # the counters' first readings
    for node in galera.nodes:  # the lifetime averages start here: the hold will weigh in them
        node.execute("FLUSH STATUS")
    flushed_at = paused_ns(node1)  # FLUSH STATUS keeps the counter (gcs/src/gcs_sm.cpp)
    with held_while_writing(galera):
        wait_for(lambda: paused_ns(node1) > flushed_at, 60, "flow control to pause node1")
        seen = [poll()]
        since = paused_ns(node1)
        # Three seconds of pause between the two polls, as the counter itself measures them.
        wait_for(lambda: paused_ns(node1) - since > 3_000_000_000, 60, "3 s of pause")
        seen.append(poll())
        cluster.refresh_from_db()
        assert "warning" in seen, seen
        assert seen[-1] == "warning", cluster.reason
        assert re.search(
            r"flow control paused replication \d+% of the last [\d.]+ s .*asked for by .*node3",
            cluster.reason,
        ), cluster.reason
        assert cluster.flow_control_paused_share > 0.9
        snapshot = cluster.snapshots.first()
        assert snapshot.nodes["node1"]["flow_control_paused_share"] > 0.9  # polled
        assert snapshot.nodes["node3"]["flow_control_paused_share"] > 0.9  # pushed
        assert snapshot.nodes["node3"]["flow_control_requested"] is True
        assert snapshot.nodes["node3"]["recv_queue"] > 0
        assert snapshot.nodes["node3"]["desync_count"] == 1
    after = [poll()]
    galera.wait_synced(galera.node("node3"))
    after.append(poll())
    cluster.refresh_from_db()
    assert after[-1] == "ok", cluster.reason
    # The nodes' lifetime averages still say they were paused much of the time; the 2018 rule
    # kept warning on them, the counter says the cluster is not paused now.
    assert cluster.flow_control_paused > 0.1
    assert cluster.flow_control_paused_share < 0.1
    api = admin_client.get(f"/api/galera/clusters/{cluster.pk}/").json()
    assert api["flow_control_paused_share"] == pytest.approx(cluster.flow_control_paused_share)
    assert api["cluster_weight"] == 4
    metric = scrape()["vigil_galera_flow_control_paused_interval_ratio"]
    assert list(metric.values()) == [pytest.approx(cluster.flow_control_paused_share)]

"""The recovery advice proven by following it, on the real 3-node cluster with garbd.

Each node pushes through the shipped agent (agents/vigil-galera-push): its wsrep status while
mysqld answers, else its grastate.dat and, after a crash, the position ``mariadbd
--wsrep-recover`` finds. Vigil is polled, the advice read from the API, and each step done as
written: ``galera_new_cluster`` is the harness's start with ``--wsrep-new-cluster`` (what the
script adds to the service), ``systemctl start mariadb`` its plain start, the grastate.dat edit
and ``pc.bootstrap`` as they are. Every test leaves the shared cluster healthy (3 Synced nodes
and garbd), by the advice or, if it fails, by ``restore``.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time

import pytest
from rest_framework.test import APIClient

from apps.accounts.models import ApiKey
from apps.galera import tasks
from apps.galera.models import Cluster, Node
from apps.galera.recovery import BOOTSTRAP_CLEAN, PC_BOOTSTRAP, SET_SAFE, START
from apps.galera.views import downtimes
from tests.helpers import ROOT, bearer
from tests.services.galera import PROVIDER

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.galera]

AGENT = ROOT / "agents" / "vigil-galera-push"
TABLE = "vigil_recovery.rows_written"
PAD = "vigil_recovery.padding"


def recover_command(node, address: str) -> str:
    """What the agent runs on a crashed node: mariadbd --wsrep-recover, printing to stderr."""
    return (
        f"runuser -u mysql -- /usr/sbin/mariadbd --no-defaults --datadir={node.datadir} "
        f"--socket={node.datadir}/recover.sock --skip-networking --innodb-buffer-pool-size=16M "
        f"--innodb-log-file-size=8M --wsrep-on=ON --wsrep-provider={PROVIDER} "
        f"--wsrep-cluster-address={address} "
        "--binlog-format=ROW --wsrep-recover --log-error=/dev/stderr"
    )


@pytest.fixture
def watched(galera, site, live_server, tmp_path, viewer):
    """The real cluster in Vigil, every node pushing; ``push()`` runs each node's agent."""
    cluster = Cluster.objects.create(
        region=site, name="recovery", expected_data_nodes=3, expected_arbitrators=1
    )
    nodes = {
        node.name: Node.objects.create(
            cluster=cluster,
            name=node.name,
            host="127.0.0.1",
            port=node.sql_port,
            mode=Node.Mode.PUSH,
        )
        for node in galera.nodes
    }
    tokens = {name: node.issue_token() for name, node in nodes.items()}
    key = ApiKey.issue(viewer, "recovery test", read_only=True)[1]

    def push() -> dict:
        for harness_node in galera.nodes:
            state = tmp_path / harness_node.name
            state.mkdir(exist_ok=True)
            env = {
                "PATH": os.environ["PATH"],
                "VIGIL_CONFIG": str(tmp_path / "none"),
                "VIGIL_URL": live_server.url,
                "VIGIL_TOKEN": tokens[harness_node.name],
                "VIGIL_NODE": str(nodes[harness_node.name].pk),
                "VIGIL_MYSQL_OPTIONS": f"--socket={harness_node.socket} --user=root",
                "VIGIL_GRASTATE": str(harness_node.datadir / "grastate.dat"),
                "VIGIL_MYSQLD_PIDFILE": str(harness_node.datadir / "mariadbd.pid"),
                "VIGIL_RECOVER": recover_command(harness_node, galera.gcomm_address),
                "VIGIL_STATE_DIR": str(state),
            }
            done = subprocess.run(
                [str(AGENT)], env=env, capture_output=True, text=True, timeout=120
            )
            assert done.returncode == 0, done.stderr
            assert "found no position" not in done.stderr, done.stderr
        tasks.poll_cluster(cluster.pk)
        return advice()

    def advice() -> dict:
        response = APIClient().get(f"/api/galera/clusters/{cluster.pk}/recovery/", **bearer(key))
        assert response.status_code == 200, response.content
        return response.json()

    try:
        yield push
    finally:
        restore(galera)


def restore(galera) -> None:
    """Healthy again whatever a failed test left: bootstrap the most advanced stopped node if
    none runs (the advice's own rule, by grastate.dat), then the harness's ensure_healthy."""
    if not galera.running_nodes():
        galera.kill_garbd()
        seqnos = {}
        for node in galera.nodes:
            text = (node.datadir / "grastate.dat").read_text()
            seqnos[node.name] = int(re.search(r"^seqno:\s*(-?\d+)", text, re.M)[1])
        first = galera.node(max(seqnos, key=seqnos.get))
        set_safe(first)
        galera.start_node(first, new_cluster=True)
        galera.wait_synced(first)
    galera.ensure_healthy()


def set_safe(node) -> None:
    path = node.datadir / "grastate.dat"
    path.write_text(path.read_text().replace("safe_to_bootstrap: 0", "safe_to_bootstrap: 1"))


def follow(galera, advice: dict) -> None:
    """Do each step as the advice writes it, in order."""
    for step in advice["steps"]:
        node = galera.node(step["node"])
        if step["command"] == SET_SAFE:
            set_safe(node)
        elif step["command"] == BOOTSTRAP_CLEAN:
            galera.kill_garbd()  # it held the old component; it joins the new one after
            galera.start_node(node, new_cluster=True)
            galera.wait_synced(node)
        elif step["command"] == START:
            galera.rejoin(node)
        elif step["command"] == PC_BOOTSTRAP:
            node.execute(step["command"])
            galera.wait_synced(node)
        else:
            raise AssertionError(f"a step the test cannot follow: {step}")
    if galera.garbd is None or galera.garbd.poll() is not None:
        galera.start_garbd()
    galera.wait_size(4)


def create_table(galera) -> None:
    first = galera.nodes[0]
    first.execute("CREATE DATABASE IF NOT EXISTS vigil_recovery")
    first.execute(f"DROP TABLE IF EXISTS {TABLE}")
    first.execute(f"CREATE TABLE {TABLE} (id INT PRIMARY KEY) ENGINE=InnoDB")


def insert(node, first: int, last: int) -> None:
    """Rows ``first``..``last`` in one committed transaction (the harness's execute does not
    commit)."""
    with node.admin() as connection, connection.cursor() as cursor:
        if first == last:
            cursor.execute(f"INSERT INTO {TABLE} (id) VALUES ({first})")
        else:
            cursor.execute(
                f"INSERT INTO {TABLE} (id) SELECT seq FROM vigil_recovery.seq_{first}_to_{last}"
            )
        connection.commit()


def ids_on(node) -> set[int]:
    with node.admin() as connection, connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {TABLE}")
        return {row[0] for row in cursor.fetchall()}


def grastate(node) -> str:
    return (node.datadir / "grastate.dat").read_text()


def test_after_a_clean_stop_it_names_the_last_node_stopped_and_following_it_keeps_every_row(
    galera, watched
):
    started = time.monotonic()
    create_table(galera)
    insert(galera.nodes[0], 1, 500)
    # garbd first: while it runs, the last data node to stop is not the last member of the
    # Primary component, and no grastate.dat says safe_to_bootstrap: 1 (seen on this cluster).
    galera.kill_garbd()
    galera.wait_size(3)
    order = [galera.node("node1"), galera.node("node3"), galera.node("node2")]
    for left, node in enumerate(order):
        galera.stop(node)
        if left < 2:
            galera.wait_size(3 - left - 1)
            insert(galera.node("node2"), 501 + 100 * left, 600 + 100 * left)  # writes go on
    assert "safe_to_bootstrap: 1" in grastate(galera.node("node2"))

    advice = watched()
    assert (advice["situation"], advice["chosen"]) == ("all_stopped", "node2"), advice
    assert [(s["node"], s["command"]) for s in advice["steps"]] == [
        ("node2", BOOTSTRAP_CLEAN),
        ("node1", START),
        ("node3", START),
    ]
    follow(galera, advice)
    for node in galera.nodes:
        assert ids_on(node) == set(range(1, 701))
    assert watched()["situation"] == "primary"
    print(f"clean stop and recovery: {time.monotonic() - started:.1f} s")


def test_after_a_crash_during_writes_it_names_the_most_advanced_and_no_acknowledged_row_is_lost(
    galera, watched
):
    """Writes run on node2 while node3, then node1, then node2 with garbd are SIGKILLed: each
    crashed node holds less than the next (node3 < node1 < node2), every grastate.dat says -1,
    and only the recovered positions tell node2 is the one to start from."""
    started = time.monotonic()
    create_table(galera)
    writer = galera.node("node2")
    acknowledged: list[int] = []

    def write() -> None:
        try:
            with writer.admin() as connection, connection.cursor() as cursor:
                for i in range(1, 1_000_000):
                    cursor.execute(f"INSERT INTO {TABLE} (id) VALUES ({i})")
                    connection.commit()
                    acknowledged.append(i)
        except Exception:  # the last kill ends it: what was acknowledged before counts
            pass

    def after(rows: int) -> None:
        deadline = time.monotonic() + 120
        while len(acknowledged) < rows:
            assert time.monotonic() < deadline and thread.is_alive(), len(acknowledged)
            time.sleep(0.01)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    after(100)
    galera.kill(galera.node("node3"))
    after(len(acknowledged) + 100)
    galera.kill(galera.node("node1"))
    after(len(acknowledged) + 100)
    galera.kill_garbd()
    galera.kill(writer)
    thread.join(30)
    written = set(acknowledged)
    for node in galera.nodes:
        assert re.search(r"^seqno:\s*-1$", grastate(node), re.M), grastate(node)

    advice = watched()
    assert advice["situation"] == "all_stopped", advice
    positions = {n["node"]: n["position"] for n in advice["nodes"]}
    assert all(n["source"] == "mysqld --wsrep-recover" for n in advice["nodes"]), advice
    assert positions["node3"] < positions["node1"] < positions["node2"], positions
    assert advice["chosen"] == "node2"
    assert [(s["node"], s["command"]) for s in advice["steps"]] == [
        ("node2", SET_SAFE),
        ("node2", BOOTSTRAP_CLEAN),
        ("node1", START),
        ("node3", START),
    ]
    follow(galera, advice)
    for node in galera.nodes:
        assert written <= ids_on(node)
    print(
        f"crash and recovery: {time.monotonic() - started:.1f} s; positions {positions}, "
        f"{len(written)} rows acknowledged"
    )


def test_in_a_partition_it_promotes_the_survivor_and_following_it_makes_the_cluster_primary(
    galera, watched
):
    started = time.monotonic()
    create_table(galera)
    insert(galera.nodes[0], 1, 100)
    survivor = galera.node("node3")
    for node in (galera.node("node1"), galera.node("node2")):
        os.kill(node.process.pid, 9)
    for node in (galera.node("node1"), galera.node("node2")):
        galera.kill(node)

    def non_primary() -> bool:
        return survivor.status().get("wsrep_cluster_status") != "Primary"

    deadline = time.monotonic() + 60
    while not non_primary():
        assert time.monotonic() < deadline, "node3 stayed Primary"
        time.sleep(0.2)

    advice = watched()
    assert (advice["situation"], advice["chosen"]) == ("partition", "node3"), advice
    assert [(s["node"], s["command"]) for s in advice["steps"]] == [
        ("node3", PC_BOOTSTRAP),
        ("node1", START),
        ("node2", START),
    ]
    assert advice["loses"].startswith("Nothing committed"), advice
    follow(galera, advice)
    assert survivor.status()["wsrep_cluster_status"] == "Primary"
    for node in galera.nodes:
        assert ids_on(node) == set(range(1, 101))
    print(f"partition and recovery: {time.monotonic() - started:.1f} s")


def test_the_real_cluster_shows_how_long_each_node_may_be_down_before_sst(
    galera, watch_galera, logged_in_client
):
    """Two polls with commits between them: the gcache's range and the commit rate, read
    from the real nodes (wsrep_local_cached_downto is not among the parser's typed facts)."""
    cluster = watch_galera("downtime")
    create_table(galera)
    assert tasks.poll_cluster(cluster.pk) == "ok"
    time.sleep(1)  # a measurable interval between the two polls
    insert(galera.nodes[0], 1, 50)
    for i in range(51, 81):  # write-sets one by one: a commit rate above 0
        insert(galera.nodes[0], i, i)
    assert tasks.poll_cluster(cluster.pk) == "ok"
    facts = cluster.snapshots.first().nodes["node1"]
    assert 0 < facts["local_cached_downto"] <= facts["last_committed"]
    assert facts["commits_per_s"] > 0
    assert "repl_latency_s" in facts  # None until the node has samples
    page = logged_in_client.get(cluster.get_absolute_url()).content.decode()
    for name in ("Node1", "Node2", "Node3"):
        assert f"{name} may be down ~" in page


def pad(node, rows: int) -> None:
    """One write-set of ``rows`` rows of 1 KB."""
    with node.admin() as connection, connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {PAD} (pad) SELECT REPEAT('x', 1000) FROM vigil_recovery.seq_1_to_{rows}"
        )
        connection.commit()


def status_int(node, name: str) -> int:
    return int(node.status()[name])


def log_since(node, offset: int) -> str:
    return (node.datadir / "error.log").read_bytes()[offset:].decode(errors="replace")


def test_a_node_down_within_the_figure_rejoins_by_ist_and_past_it_needs_a_full_transfer(
    galera, watch_galera
):
    """The figure in write-sets (what the others' gcache holds when node3 leaves; the page
    divides it by the commit rate): fewer write-sets than that while node3 is down, and it
    rejoins by IST; more, until the donors' gcache no longer holds where node3 left, and it
    needs an SST. The joiner's error log says which (seen here: the donors' gcache held only
    what came since they last started, a dozen write-sets, the figure low as it says)."""
    started = time.monotonic()
    cluster = watch_galera("window")
    first = galera.nodes[0]
    first.execute("CREATE DATABASE IF NOT EXISTS vigil_recovery")
    first.execute(f"CREATE TABLE IF NOT EXISTS {PAD} (id INT AUTO_INCREMENT PRIMARY KEY, pad TEXT)")
    assert tasks.poll_cluster(cluster.pk) == "ok"
    time.sleep(1)
    for _ in range(5):
        pad(first, 1)
    assert tasks.poll_cluster(cluster.pk) == "ok"
    figure = {d.node: d for d in downtimes(cluster.snapshots.first())}["node3"]
    assert figure.commits_per_s > 0

    node3 = galera.node("node3")
    galera.stop(node3)
    galera.wait_size(3)
    within = 5
    assert within < figure.held
    for _ in range(within):
        pad(first, 1)
    offset = (node3.datadir / "error.log").stat().st_size
    galera.rejoin(node3)
    joined = log_since(node3, offset)
    # MariaDB's rsync script runs on the joiner either way; it says which it did.
    assert "rsync IST completed on joiner" in joined, joined[-3000:]
    assert "rsync SST completed" not in joined

    left = status_int(node3, "wsrep_last_committed")
    galera.stop(node3)
    galera.wait_size(3)
    donors = [galera.node("node1"), galera.node("node2")]
    for _ in range(3000):  # 100 KB write-sets until no donor's gcache holds node3's next one
        if all(status_int(d, "wsrep_local_cached_downto") > left + 1 for d in donors):
            break
        pad(first, 100)
    else:
        raise AssertionError("the gcache still holds where node3 left")
    assert status_int(first, "wsrep_last_committed") - left > figure.held
    offset = (node3.datadir / "error.log").stat().st_size
    galera.rejoin(node3)
    joined = log_since(node3, offset)
    assert "rsync SST completed on joiner" in joined, joined[-3000:]
    assert "rsync IST completed" not in joined
    first.execute(f"DROP TABLE {PAD}")
    print(f"IST within, SST past the figure ({figure.words}): {time.monotonic() - started:.1f} s")

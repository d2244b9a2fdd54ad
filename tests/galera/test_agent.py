"""The shipped agents/vigil-galera-push on a stopped node, against a live Vigil with a real
token: a grastate.dat of the test's (VIGIL_GRASTATE), no mysqld answering, and a stub
``galera_recovery`` on PATH printing what the real one prints. The real cluster's stopped and
crashed nodes: tests/galera/test_recovery_cluster.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from apps.galera.models import Cluster, Node
from tests.helpers import ROOT

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = ROOT / "agents" / "vigil-galera-push"
UUID = "b9f2a2b4-ffde-11ef-bcd1-a3710702a9fb"
STUB = '#!/bin/sh\necho "WSREP: Running position recovery" >&2\necho "--wsrep_start_position={uuid}:{seqno}"\n'


@pytest.fixture
def node(site) -> Node:
    cluster = Cluster.objects.create(region=site, name="prod-db", expected_data_nodes=1)
    return Node.objects.create(cluster=cluster, name="db1", host="127.0.0.31", mode="push")


@pytest.fixture
def agent_env(tmp_path: Path, live_server, node) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    config = tmp_path / "vigil-galera-push"
    config.write_text(
        f"VIGIL_URL={live_server.url}/\nVIGIL_TOKEN={node.issue_token()}\nVIGIL_NODE={node.pk}\n"
        f"VIGIL_MYSQL_OPTIONS=--socket={tmp_path}/no.sock\n"
    )
    config.chmod(0o600)
    (tmp_path / "state").mkdir()
    return {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "VIGIL_CONFIG": str(config),
        "VIGIL_GRASTATE": str(tmp_path / "grastate.dat"),
        "VIGIL_MYSQLD_PIDFILE": str(tmp_path / "mysqld.pid"),
        "VIGIL_STATE_DIR": str(tmp_path / "state"),
    }


def recovery_prints(env: dict[str, str], seqno: int) -> None:
    stub = Path(env["PATH"].split(":", 1)[0]) / "galera_recovery"
    stub.write_text(STUB.format(uuid=UUID, seqno=seqno))
    stub.chmod(0o755)


def write_grastate(env: dict[str, str], seqno: int, safe: int, mtime: float) -> None:
    path = Path(env["VIGIL_GRASTATE"])
    path.write_text(
        f"# GALERA saved state\nversion: 2.1\nuuid:    {UUID}\nseqno:   {seqno}\n"
        f"safe_to_bootstrap: {safe}\n"
    )
    os.utime(path, (mtime, mtime))


def run(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(AGENT)], env=env, capture_output=True, text=True, timeout=60)


def test_a_cleanly_stopped_node_sends_its_grastate(agent_env, node):
    write_grastate(agent_env, 1234, 1, 1_700_000_000)
    done = run(agent_env)
    assert done.returncode == 0, done.stderr
    node.refresh_from_db()
    assert node.state == "stopped"
    assert node.grastate == {
        "uuid": UUID,
        "seqno": 1234,
        "safe_to_bootstrap": True,
        "recovered_uuid": None,
        "recovered_seqno": None,
        "recovered_by": "",
    }


def test_a_crashed_node_sends_the_recovered_position_found_once_per_crash(agent_env, node):
    write_grastate(agent_env, -1, 0, 1_700_000_000)
    recovery_prints(agent_env, 77)
    assert run(agent_env).returncode == 0
    node.refresh_from_db()
    assert (node.grastate["recovered_seqno"], node.grastate["recovered_by"]) == (
        77,
        "galera_recovery",
    )
    recovery_prints(agent_env, 99)  # not run again: grastate.dat has not changed
    assert run(agent_env).returncode == 0
    node.refresh_from_db()
    assert node.grastate["recovered_seqno"] == 77
    write_grastate(agent_env, -1, 0, 4_000_000_000)  # started and crashed again
    assert run(agent_env).returncode == 0
    node.refresh_from_db()
    assert node.grastate["recovered_seqno"] == 99


def test_it_never_recovers_while_mysqld_runs(agent_env, node):
    write_grastate(agent_env, -1, 0, 1_700_000_000)
    recovery_prints(agent_env, 5)
    Path(agent_env["VIGIL_MYSQLD_PIDFILE"]).write_text(f"{os.getpid()}\n")
    done = run(agent_env)
    assert done.returncode == 1
    assert "mysqld runs" in done.stderr
    assert not (Path(agent_env["VIGIL_STATE_DIR"]) / "vigil-galera-push.recovered").exists()
    node.refresh_from_db()
    assert node.reported_at is None

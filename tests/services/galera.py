"""A real MariaDB Galera cluster on loopback for the tests: 3 nodes plus garbd.

Facts this harness follows (seen on this machine, MariaDB 10.11 + Galera 26.4):
- mariadbd runs as the ``mysql`` user (the rsync SST drops to ``nobody`` otherwise), each
  node with its own datadir, socket, SQL, gcomm, IST and SST ports, all on 127.0.0.1;
- garbd gets the same (lowered) evs timeouts as the nodes, or one kill also drops garbd;
- processes are known by PID only; everything under one temporary directory is removed at
  the end.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pymysql

from tests.services import wait_for

CLUSTER_NAME = "vigil-test"
MONITOR_USER = "vigil_monitor"
MONITOR_PASSWORD = "vigil-monitor-secret"
PROVIDER = "/usr/lib/galera/libgalera_smm.so"
# Lowered failure detection (defaults: suspect 5 s, inactive 15 s); garbd gets the same.
EVS_OPTIONS = (
    "evs.keepalive_period=PT0.5S;evs.inactive_check_period=PT0.5S;"
    "evs.suspect_timeout=PT2S;evs.inactive_timeout=PT3S;evs.install_timeout=PT3S"
)
SETTLE_TIMEOUT = 90.0


class ClusterError(RuntimeError):
    pass


# While a node starts or rejoins, its socket refuses connections: not yet, not an error.
NOT_YET = (pymysql.Error, OSError)


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def as_mysql(command: list[str]) -> subprocess.Popen:
    """Start ``command`` as the mysql user in its own session (it writes a log file of its own)."""
    return subprocess.Popen(
        command,
        user="mysql",
        group="mysql",
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


@dataclass
class Node:
    name: str
    index: int
    sql_port: int
    gcomm_port: int
    ist_port: int
    sst_port: int
    datadir: Path
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def socket(self) -> Path:
        return self.datadir / "mariadbd.sock"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = (self.datadir / "error.log").read_text(errors="replace")
        except OSError as error:
            return str(error)
        return "\n".join(text.splitlines()[-lines:])

    def admin(self) -> pymysql.connections.Connection:
        """A root connection over the node's socket (root by unix_socket authentication)."""
        return pymysql.connect(
            unix_socket=str(self.socket), user="root", connect_timeout=2, read_timeout=5
        )

    def status(self) -> dict[str, str]:
        with self.admin() as connection, connection.cursor() as cursor:
            cursor.execute("SHOW GLOBAL STATUS LIKE 'wsrep_%'")
            return {name.lower(): value for name, value in cursor.fetchall()}

    def execute(self, sql: str) -> None:
        with self.admin() as connection, connection.cursor() as cursor:
            cursor.execute(sql)


class GaleraCluster:
    """Three MariaDB Galera nodes and one garbd on 127.0.0.1, under one temporary directory."""

    def __init__(self, base_port: int | None = None, gcomm_base: int | None = None) -> None:
        # TEST_GALERA_PORT moves every port, so that two checkouts can each run a cluster.
        offset = int(os.environ.get("TEST_GALERA_PORT", "13061")) - 13061
        base_port = base_port or 13061 + offset
        gcomm_base = gcomm_base or 14561 + offset
        self.root = Path(tempfile.mkdtemp(prefix="vigil-galera-"))
        self.nodes = [
            Node(
                name=f"node{i}",
                index=i,
                sql_port=base_port + i - 1,
                gcomm_port=gcomm_base + i - 1,
                ist_port=gcomm_base + 10 + i - 1,
                sst_port=gcomm_base + 20 + i - 1,
                datadir=self.root / f"node{i}",
            )
            for i in (1, 2, 3)
        ]
        self.garbd_port = gcomm_base + 3
        self.garbd: subprocess.Popen | None = None
        ports = [self.garbd_port]
        for node in self.nodes:
            ports += [node.sql_port, node.gcomm_port, node.ist_port, node.sst_port]
        busy = [port for port in ports if not port_is_free(port)]
        if busy:
            shutil.rmtree(self.root, ignore_errors=True)
            raise ClusterError(f"ports already in use on 127.0.0.1: {busy}")

    # -- addresses ------------------------------------------------------------------

    @property
    def gcomm_address(self) -> str:
        peers = ",".join(f"127.0.0.1:{node.gcomm_port}" for node in self.nodes)
        return f"gcomm://{peers}"

    def node(self, name: str) -> Node:
        return next(node for node in self.nodes if node.name == name)

    # -- life cycle -----------------------------------------------------------------

    def start(self) -> None:
        os.chmod(self.root, 0o755)
        template = self.root / "template"
        subprocess.run(
            [
                "mariadb-install-db",
                "--no-defaults",
                "--user=mysql",
                f"--datadir={template}",
                "--skip-test-db",
                "--auth-root-authentication-method=socket",
                "--innodb-log-file-size=8M",
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        for node in self.nodes:
            shutil.copytree(template, node.datadir, symlinks=True)
        subprocess.run(["chown", "-R", "mysql:mysql", str(self.root)], check=True)
        first, *others = self.nodes
        self.start_node(first, new_cluster=True)
        self.wait_synced(first)
        first.execute(f"CREATE USER '{MONITOR_USER}'@'%' IDENTIFIED BY '{MONITOR_PASSWORD}'")
        first.execute(f"GRANT USAGE ON *.* TO '{MONITOR_USER}'@'%'")
        for node in others:
            self.start_node(node)
            self.wait_synced(node)
        self.start_garbd()
        self.wait_size(4)

    def start_node(self, node: Node, *, new_cluster: bool = False) -> None:
        if node.running:
            raise ClusterError(f"{node.name} is already running")
        options = (
            f"base_host=127.0.0.1;base_port={node.gcomm_port};"
            f"gmcast.listen_addr=tcp://127.0.0.1:{node.gcomm_port};"
            f"ist.recv_addr=127.0.0.1:{node.ist_port};gcache.size=16M;{EVS_OPTIONS}"
        )
        command = [
            "/usr/sbin/mariadbd",
            "--no-defaults",
            f"--datadir={node.datadir}",
            f"--socket={node.socket}",
            f"--port={node.sql_port}",
            "--bind-address=127.0.0.1",
            f"--pid-file={node.datadir / 'mariadbd.pid'}",
            f"--log-error={node.datadir / 'error.log'}",
            "--skip-name-resolve",
            "--innodb-buffer-pool-size=16M",
            "--innodb-log-file-size=8M",
            "--key-buffer-size=1M",
            "--performance-schema=OFF",
            "--binlog-format=ROW",
            "--default-storage-engine=InnoDB",
            "--innodb-autoinc-lock-mode=2",
            "--wsrep-on=ON",
            f"--wsrep-provider={PROVIDER}",
            f"--wsrep-cluster-name={CLUSTER_NAME}",
            f"--wsrep-cluster-address={self.gcomm_address}",
            f"--wsrep-node-name={node.name}",
            f"--wsrep-node-address=127.0.0.1:{node.gcomm_port}",
            f"--wsrep-node-incoming-address=127.0.0.1:{node.sql_port}",
            f"--wsrep-sst-receive-address=127.0.0.1:{node.sst_port}",
            "--wsrep-sst-method=rsync",
            f"--wsrep-provider-options={options}",
        ]
        if new_cluster:
            command.append("--wsrep-new-cluster")
        node.process = as_mysql(command)

    def start_garbd(self) -> None:
        options = (
            f"base_host=127.0.0.1;base_port={self.garbd_port};"
            f"gmcast.listen_addr=tcp://127.0.0.1:{self.garbd_port};{EVS_OPTIONS}"
        )
        self.garbd = as_mysql(
            [
                "/usr/bin/garbd",
                f"--address={self.gcomm_address}",
                f"--group={CLUSTER_NAME}",
                f"--options={options}",
                f"--log={self.root / 'garbd.log'}",
            ]
        )

    def kill(self, node: Node) -> None:
        """SIGKILL: the node vanishes without announcing it."""
        if node.process is not None and node.process.poll() is None:
            os.kill(node.process.pid, signal.SIGKILL)
            node.process.wait(timeout=30)
        node.process = None

    def stop(self, node: Node) -> None:
        """SIGTERM: a clean shutdown that leaves the cluster announced."""
        if node.process is not None and node.process.poll() is None:
            os.kill(node.process.pid, signal.SIGTERM)
            node.process.wait(timeout=60)
        node.process = None

    def kill_garbd(self) -> None:
        if self.garbd is not None and self.garbd.poll() is None:
            os.kill(self.garbd.pid, signal.SIGKILL)
            self.garbd.wait(timeout=30)
        self.garbd = None

    def teardown(self) -> None:
        self.kill_garbd()
        for node in self.nodes:
            self.kill(node)
        shutil.rmtree(self.root, ignore_errors=True)

    # -- waiting ------------------------------------------------------------------------

    def running_nodes(self) -> list[Node]:
        return [node for node in self.nodes if node.running]

    def wait_synced(self, node: Node, timeout: float = SETTLE_TIMEOUT) -> None:
        def synced() -> bool:
            if not node.running:
                raise ClusterError(f"{node.name} exited:\n{node.log_tail()}")
            status = node.status()
            return (
                status.get("wsrep_local_state_comment") == "Synced"
                and status.get("wsrep_cluster_status") == "Primary"
                and status.get("wsrep_ready") == "ON"
            )

        try:
            wait_for(
                synced,
                timeout,
                f"{node.name} to be Synced",
                interval=0.2,
                retry_on=NOT_YET,
                error=ClusterError,
            )
        except ClusterError as error:
            raise ClusterError(f"{error}\n{node.name} error log:\n{node.log_tail()}") from None

    def wait_size(self, size: int, timeout: float = SETTLE_TIMEOUT) -> None:
        """Until every running node reports ``size`` members (survivors lag behind a kill)."""

        def settled() -> bool:
            nodes = self.running_nodes()
            return bool(nodes) and all(
                node.status().get("wsrep_cluster_size") == str(size) for node in nodes
            )

        wait_for(
            settled,
            timeout,
            f"cluster size {size}",
            interval=0.2,
            retry_on=NOT_YET,
            error=ClusterError,
        )

    def rejoin(self, node: Node, attempts: int = 3) -> None:
        """Start a node that was down and wait until it is Synced.

        A node restarted seconds after it left can find its peers still holding its old
        identity and give up waiting for a Primary view; it exits, and is started again.
        """
        for attempt in range(1, attempts + 1):
            self.start_node(node)
            try:
                self.wait_synced(node)
            except ClusterError:
                if node.running or attempt == attempts:
                    raise
                node.process = None
            else:
                return

    def ensure_healthy(self) -> None:
        """Bring back whatever an earlier scenario took down: 3 Synced nodes and garbd."""
        running = self.running_nodes()
        if running and all(n.status().get("wsrep_cluster_status") != "Primary" for n in running):
            running[0].execute("SET GLOBAL wsrep_provider_options='pc.bootstrap=YES'")
            self.wait_synced(running[0])
        if not running:
            raise ClusterError("every node is down; the harness does not re-bootstrap from disk")
        for node in self.nodes:
            if node.running:
                node.execute("SET GLOBAL wsrep_desync=OFF")
        for node in self.nodes:
            if not node.running:
                self.rejoin(node)
        if self.garbd is None or self.garbd.poll() is not None:
            self.start_garbd()
        self.wait_size(4)
        for node in self.nodes:
            self.wait_synced(node)

"""Benchmark: polling a real 3-node MariaDB Galera cluster plus garbd on loopback.

    .venv/bin/python bench/galera.py [--polls 50] [--black-holed-polls 3] [--json] [--tiny]
                                     [--nodes 127.0.0.1:13061,127.0.0.1:13062,127.0.0.1:13063]

Starts the test harness's cluster (tests/services/galera.py, about half a minute; its ports
move with ``TEST_GALERA_PORT``), then measures: the wall time of one concurrent poll of the
three nodes (adapter + build_view + verdict); the same poll with a fourth, black-holed node
added (it costs one timeout, not one per node); and, after a SIGKILL of node3, how long until a
poll sees the cluster shrink (the harness lowers evs.suspect_timeout to 2 s), then how long
node3 takes to rejoin as Synced. The cluster is torn down at the end. With ``--nodes`` it polls
a running cluster of the harness instead (the test suite's: its monitoring user), and leaves it
alone: no kill, no rejoin. With ``--json`` the last line is one JSON object. ``--tiny``: three
polls, one with the black-holed node.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apps.galera.mysql import NodeAddress, poll_nodes  # noqa: E402
from apps.galera.verdict import ClusterView, build_view, cluster_verdict  # noqa: E402
from apps.lib.outbound import Policy  # noqa: E402
from bench.environment import parse_args  # noqa: E402
from tests.services import wait_for  # noqa: E402
from tests.services.galera import MONITOR_PASSWORD, MONITOR_USER, GaleraCluster  # noqa: E402

TIMEOUT_S = 3.0  # what apps/galera/collect.py uses
TINY = {"polls": 3, "black_holed_polls": 1}


def poll(addresses: list[NodeAddress]) -> ClusterView:
    view = build_view(
        poll_nodes(
            addresses,
            MONITOR_USER,
            MONITOR_PASSWORD,
            connect_timeout=TIMEOUT_S,
            read_timeout=TIMEOUT_S,
            policy=Policy(allow_loopback=True),  # the cluster listens on loopback
        )
    )
    cluster_verdict(view, expected_data_nodes=3, expected_arbitrators=1)
    return view


def timed(addresses: list[NodeAddress], polls: int) -> list[float]:
    times = []
    for _ in range(polls):
        started = time.perf_counter()
        poll(addresses)
        times.append(time.perf_counter() - started)
    return times


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 1),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--polls", type=int, default=50)
    parser.add_argument("--black-holed-polls", type=int, default=3)
    parser.add_argument(
        "--nodes", default="", help="host:port,...: poll this running cluster of the harness"
    )
    parser.add_argument("--json", action="store_true")
    args = parse_args(parser, TINY)

    figures: dict[str, object] = {"polls": args.polls, "timeout_s": TIMEOUT_S}
    if args.nodes:
        live = [
            NodeAddress(host, int(port), f"node{i}")
            for i, (host, port) in enumerate(
                (node.rsplit(":", 1) for node in args.nodes.split(",")), 1
            )
        ]
        measure_polls(live, args, figures)
    else:
        cluster = GaleraCluster()
        try:
            started = time.monotonic()
            cluster.start()
            figures["cluster_start_s"] = round(time.monotonic() - started, 1)
            live = [NodeAddress("127.0.0.1", n.sql_port, n.name) for n in cluster.nodes]
            measure_polls(live, args, figures)
            kill_and_rejoin(cluster, live, figures)
        finally:
            cluster.teardown()

    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key}: {value}")


def measure_polls(live: list[NodeAddress], args: argparse.Namespace, figures: dict) -> None:
    figures["three_nodes"] = summary(timed(live, args.polls))
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as hole:
        hole.bind(("127.0.0.1", 0))
        hole.listen(8)
        black_holed = [*live, NodeAddress("127.0.0.1", hole.getsockname()[1], "hole")]
        figures["with_a_black_holed_node"] = summary(timed(black_holed, args.black_holed_polls))


def kill_and_rejoin(cluster: GaleraCluster, live: list[NodeAddress], figures: dict) -> None:
    """SIGKILL node3: how long until a poll sees the cluster shrink (3 and garbd), then until
    it rejoins."""
    cluster.kill(cluster.node("node3"))
    killed = time.monotonic()
    wait_for(lambda: poll(live).cluster_size == 3, 120, "a poll to see node3 gone")
    figures["kill_seen_after_s"] = round(time.monotonic() - killed, 1)
    started = time.monotonic()
    cluster.rejoin(cluster.node("node3"))
    figures["rejoin_synced_after_s"] = round(time.monotonic() - started, 1)


if __name__ == "__main__":
    main()

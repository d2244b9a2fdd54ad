"""Benchmark: polling a real 3-node MariaDB Galera cluster plus garbd on loopback.

    .venv/bin/python bench/galera.py [--polls 50] [--json]

Starts the test harness's cluster (tests/services/galera.py, about a minute), then measures:
the wall time of one concurrent poll of the three nodes (adapter + build_view + verdict);
the same poll with a fourth, black-holed node added (it costs one timeout, not one per node);
and, after a SIGKILL of node3, how long until a poll sees the cluster shrink (the harness
lowers evs.suspect_timeout to 2 s), then how long node3 takes to rejoin as Synced. The cluster
is torn down at the end. With ``--json`` the last line is one JSON object.
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
from tests.services.galera import MONITOR_PASSWORD, MONITOR_USER, GaleraCluster  # noqa: E402

TIMEOUT_S = 3.0  # what apps/galera/collect.py uses


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
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    cluster = GaleraCluster()
    figures: dict[str, object] = {"polls": args.polls, "timeout_s": TIMEOUT_S}
    try:
        started = time.monotonic()
        cluster.start()
        figures["cluster_start_s"] = round(time.monotonic() - started, 1)
        live = [NodeAddress("127.0.0.1", n.sql_port, n.name) for n in cluster.nodes]
        figures["three_nodes"] = summary(timed(live, args.polls))

        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as hole:
            hole.bind(("127.0.0.1", 0))
            hole.listen(8)
            black_holed = [*live, NodeAddress("127.0.0.1", hole.getsockname()[1], "hole")]
            figures["with_a_black_holed_node"] = summary(timed(black_holed, 3))

        cluster.kill(cluster.node("node3"))
        killed = time.monotonic()
        while poll(live).cluster_size != 3:
            time.sleep(0.1)
        figures["kill_seen_after_s"] = round(time.monotonic() - killed, 1)
        started = time.monotonic()
        cluster.rejoin(cluster.node("node3"))
        figures["rejoin_synced_after_s"] = round(time.monotonic() - started, 1)
    finally:
        cluster.teardown()

    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()

"""Benchmark: many concurrent keep-alive probes from one process against a local nginx.

    .venv/bin/python bench/probes.py [--probes 10000] [--keepalive 10] [--json] [--tiny]

Starts its own nginx (Debian's /usr/sbin/nginx) on free 127.0.0.1 ports with a known
``keepalive_timeout``, runs every probe at once in one asyncio loop, stops nginx, and prints
peak RSS of this process, the largest error of the measured idle timeout against the
configured one, and the time until every probe had its response and was waiting idle.
With ``--json`` the last line is one JSON object. ``--tiny``: 20 probes, a 1 s keep-alive.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import resource
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apps.probes.keepalive import Measurement, measure  # noqa: E402
from bench.environment import parse_args  # noqa: E402
from tests.services.nginx import Nginx, Site, raise_open_files_limit  # noqa: E402

PROBES_PER_PORT = 8000  # well under the ~28k ephemeral source ports per destination port
TINY = {"probes": 20, "keepalive": 1.0}


async def run_probes(urls: list[str], cap_s: float, timeout_s: float) -> dict:
    """Start one probe per URL at once; return the figures."""
    started = time.monotonic()
    idle_at: list[float] = []
    results: list[Measurement] = []

    async def one(url: str) -> None:
        called = time.monotonic()
        result = await measure(url, cap_s=cap_s, timeout_s=timeout_s)
        if result.total_s is not None:
            idle_at.append(called + result.total_s - started)
        results.append(result)

    tasks = [asyncio.create_task(one(url)) for url in urls]
    created_s = time.monotonic() - started
    await asyncio.gather(*tasks)
    return {
        "results": results,
        "tasks_created_s": created_s,
        "start_all_s": max(idle_at) if idle_at else None,
        "wall_s": time.monotonic() - started,
    }


def figures(run: dict, probes: int, keepalive_s: float) -> dict:
    results: list[Measurement] = run["results"]
    measured = [m.idle_timeout_s for m in results if m.idle_timeout_s is not None]
    errors = [abs(idle - keepalive_s) for idle in measured]
    failures = Counter(m.error for m in results if m.error is not None)
    return {
        "probes": probes,
        "measured": len(measured),
        "failed": sum(failures.values()),
        "failures": dict(failures.most_common(5)),
        "capped": sum(1 for m in results if m.closed_by == "cap"),
        "configured_timeout_s": keepalive_s,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "max_abs_error_s": round(max(errors), 4) if errors else None,
        "median_abs_error_s": round(statistics.median(errors), 4) if errors else None,
        "p99_abs_error_s": round(sorted(errors)[int(0.99 * (len(errors) - 1))], 4)
        if errors
        else None,
        "min_idle_s": round(min(measured), 4) if measured else None,
        "max_idle_s": round(max(measured), 4) if measured else None,
        "start_all_s": round(run["start_all_s"], 3) if run["start_all_s"] is not None else None,
        "tasks_created_s": round(run["tasks_created_s"], 3),
        "wall_s": round(run["wall_s"], 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes", type=int, default=10_000)
    parser.add_argument("--keepalive", type=float, default=10.0, help="nginx keepalive_timeout, s")
    parser.add_argument("--workers", type=int, default=1, help="nginx worker processes")
    parser.add_argument("--json", action="store_true", help="last line: one JSON object")
    args = parse_args(parser, TINY, argv)

    limit = raise_open_files_limit(args.probes + 1024)
    ports = max(1, math.ceil(args.probes / PROBES_PER_PORT))
    connections = args.probes + 1024
    with tempfile.TemporaryDirectory(prefix="vigil-bench-nginx-") as directory:
        nginx = Nginx(
            Path(directory),
            [Site(f"{args.keepalive:g}s") for _ in range(ports)],
            workers=args.workers,
            worker_connections=connections,
            backlog=4096,
        )
        with nginx:
            urls = [nginx.url(nginx.sites[i % ports]) for i in range(args.probes)]
            run = asyncio.run(run_probes(urls, cap_s=args.keepalive * 3, timeout_s=30.0))
    result = figures(run, args.probes, args.keepalive)
    result.update(open_files_limit=limit, nginx_ports=ports, nginx_workers=args.workers)

    print(
        f"probes:               {result['probes']} ({result['measured']} measured, "
        f"{result['failed']} failed, {result['capped']} capped)"
    )
    print(f"peak RSS:             {result['peak_rss_mb']} MB (goal <= 200 MB)")
    print(
        f"max abs error:        {result['max_abs_error_s']} s vs {args.keepalive:g} s "
        f"(goal <= 0.2 s; median {result['median_abs_error_s']}, p99 {result['p99_abs_error_s']})"
    )
    print(
        f"time to start all:    {result['start_all_s']} s "
        f"(tasks created in {result['tasks_created_s']} s)"
    )
    if result["failures"]:
        print(f"failures:             {result['failures']}")
    if args.json:
        print(json.dumps(result))
    return 0 if result["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: rendering ``/metrics`` for a fleet at the users' story's scale.

    .venv/bin/python bench/metrics.py [--renders 30] [--json]
        [--database-url postgres://postgres@127.0.0.1:5432/vigil_bench] [--build] [--tiny]

Renders the Prometheus exposition ``--renders`` times (the view's work without HTTP: the
queries, the collector and prometheus-client's text encoder) and prints p50/p95/max in ms, the
SQL queries per render, the number of samples and the body's size, plain and gzipped (what a
Prometheus server that sends ``Accept-Encoding: gzip`` receives). Renders skip the body cache
(``VIGIL_METRICS_CACHE_SECONDS``); ``cached_ms`` is one answer from it.

It reads the database it is given (by default ``DATABASE_URL``, else ``var/``'s SQLite): run
``manage.py seed_fleet`` on it first, or pass ``--build`` to bulk-create a synthetic fleet
(1,000 file systems, 50 clusters, 500 arrays, 1,000 probe targets with a day of results each,
in 10 regions; ``--filesystems`` and the like change it) in a new temporary SQLite database, or
in ``--database-url`` when given (which must be empty: the schema is migrated into it). With
``--json`` the last line is one JSON object. ``--tiny``: two renders of a fleet of a few built
in a temporary database.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.environment import parse_args  # noqa: E402

#: ``--tiny``: a few subjects of each kind, built in a temporary database, rendered twice.
TINY = {
    "renders": 2,
    "database_url": "",
    "build": True,
    "regions": 2,
    "filesystems": 10,
    "clusters": 2,
    "arrays": 5,
    "probes": 5,
    "results_per_target": 4,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renders", type=int, default=30)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    parser.add_argument("--build", action="store_true", help="bulk-create a synthetic fleet")
    parser.add_argument("--regions", type=int, default=10, help="with --build")
    parser.add_argument("--filesystems", type=int, default=1000, help="with --build")
    parser.add_argument("--clusters", type=int, default=50, help="with --build")
    parser.add_argument("--arrays", type=int, default=500, help="with --build")
    parser.add_argument("--probes", type=int, default=1000, help="with --build")
    parser.add_argument("--results-per-target", type=int, default=96)
    parser.add_argument("--json", action="store_true")
    args = parse_args(parser, TINY)

    tmp = None
    if args.build and not args.database_url:
        tmp = tempfile.TemporaryDirectory(prefix="vigil-bench-metrics-")
        args.database_url = f"sqlite:///{tmp.name}/bench.sqlite3"
    if args.database_url:
        os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    os.environ.setdefault("VIGIL_DEMO", "false")
    # Every render measured is a whole one; the cached answer is measured apart below.
    os.environ["VIGIL_METRICS_CACHE_SECONDS"] = "0"

    import django

    django.setup()
    # apps' modules once main() has set Django up (django.setup())
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from prometheus_client.parser import text_string_to_metric_families

    from apps.prometheus.collector import render

    figures: dict[str, object] = {"database": connection.vendor, "renders": args.renders}
    if args.build:
        # apps' modules once main() has set Django up (django.setup())
        from tests.prometheus.fleet import build_fleet

        call_command("migrate", verbosity=0)
        started = time.perf_counter()
        build_fleet(
            regions=args.regions,
            prefix="bench",
            filesystems=args.filesystems,
            clusters=args.clusters,
            arrays=args.arrays,
            probes=args.probes,
            results=args.results_per_target,
        )
        figures["build_s"] = round(time.perf_counter() - started, 1)

    body, _ = render()  # warm up: imports, first connection
    times = []
    for _ in range(args.renders):
        started = time.perf_counter()
        with CaptureQueriesContext(connection) as queries:
            body, _ = render()
        times.append(time.perf_counter() - started)
    ordered = sorted(times)
    from django.test import override_settings

    with override_settings(VIGIL_METRICS_CACHE_SECONDS=15):
        render()
        started = time.perf_counter()
        render()
        cached_ms = (time.perf_counter() - started) * 1000
    families = list(text_string_to_metric_families(body.decode()))
    subjects = {
        s.labels["concern"]: 0
        for f in families
        if f.name == "vigil_subject_status"
        for s in f.samples
    }
    for f in families:
        if f.name == "vigil_subject_status":
            for s in f.samples:
                if s.value == 1.0:
                    subjects[s.labels["concern"]] += 1
    figures.update(
        {
            "subjects": subjects,
            "samples": sum(len(f.samples) for f in families),
            "queries": len(queries.captured_queries),
            "p50_ms": round(statistics.median(ordered) * 1000, 1),
            "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 1),
            "max_ms": round(ordered[-1] * 1000, 1),
            "goal_ms": 200,
            "cached_ms": round(cached_ms, 1),
            "body_kib": round(len(body) / 1024, 1),
            "gzip_kib": round(len(gzip.compress(body)) / 1024, 1),
        }
    )
    for key, value in figures.items():
        print(f"{key:>10}: {value}")
    if args.json:
        print(json.dumps(figures))
    if tmp is not None:
        connection.close()
        tmp.cleanup()


if __name__ == "__main__":
    main()

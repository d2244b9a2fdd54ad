"""EFS minute rows' expiry and the file system page's chart queries, on a seeded fleet.

    python bench/efs_partitions.py --database-url postgres://postgres@127.0.0.1:5432/vigil_x
                                   [--pages 50] [--repeat 5] [--seed] [--json] [--tiny]

On a fleet seeded with ``manage.py seed_fleet`` (1,000 file systems and 7 days of minutes by
default: about 10 million minute rows; ``--seed`` migrates the database and seeds one of
``--filesystems`` and ``--days``, replacing the seeded fleet), with the minute table
partitioned by day or not (``efs.0006_minute_partitions``), measures:

- ``chart_24h``: the file system page's 24-hour chart (``history.load_series`` of
  ``CHART_FIELDS`` at the page's step, and the recent burst credits it reads), for ``--pages``
  file systems, ``--repeat`` times: wall and process CPU per page, and the database's own
  execution time of the chart's minute query (``EXPLAIN ANALYZE``), with the partitions its
  plan reads;
- ``expiry``: the next day past the minute retention, as production meets it a day later:
  every file system's hourly rollup (``history.rollup``, which on an unpartitioned table also
  deletes the rolled-up minutes row by row, file system by file system), then the hourly
  ``expire-history`` (``retention.expire_all``, which on a partitioned table rolls up what no
  rollup reached and drops the day's partition whole). Both run in one transaction that is
  rolled back, so the fleet is left as it was and the measurement can be repeated;
- with ``--against URL`` (a copy of the same seed, the other way: ``createdb -T``), the 24-hour
  chart's minute query alternately on both databases for the same file systems, twice over
  (the second pass warm): p50 and p90 of each, under the same load.

The load average is printed with the figures: the machine may be shared. Without
``--database-url`` the database is a new temporary SQLite one (give ``--seed``): no partitions
there, and no ``EXPLAIN ANALYZE`` (its figures are left out). ``--tiny`` seeds three file
systems with eight days (one past the minutes kept, so that a day expires) and reads three pages
once.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.environment import django_environment, parse_args  # noqa: E402

#: ``--tiny``: three file systems, eight days (one past the minutes kept), three pages once.
TINY = {"seed": True, "filesystems": 3, "days": 8, "pages": 3, "repeat": 1}


class Rollback(Exception):
    pass


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def chart(filesystems: list[int], now, repeat: int) -> dict:
    # apps' modules once main() has set Django up (django.setup())
    import re

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.efs import history

    start = now - timedelta(hours=24)
    step = history.chart_step(start, now, now)

    def page(pk: int) -> None:
        history.load_series(pk, start, now, step, now, history.CHART_FIELDS)
        history.load_samples([pk], now - timedelta(hours=3), now, fields=("burst_credit_balance",))

    walls, cpus, db, planning = [], [], [], []
    for _ in range(repeat):
        for pk in filesystems:
            _, wall, cpu = timed(lambda pk=pk: page(pk))
            walls.append(wall * 1000)
            cpus.append(cpu * 1000)
    plan = ""
    explained = filesystems[:10] * repeat if connection.vendor == "postgresql" else []
    for pk in explained:  # the database's own time for the page's minute reads
        with CaptureQueriesContext(connection) as queries:
            page(pk)
        spent = planned = 0.0
        for query in queries.captured_queries:
            if "efs_metricminute" not in query["sql"]:
                continue
            with connection.cursor() as cursor:
                cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {query['sql']}")
                plan = "\n".join(row[0] for row in cursor.fetchall())
            spent += float(re.search(r"Execution Time: ([\d.]+)", plan)[1])
            planned += float(re.search(r"Planning Time: ([\d.]+)", plan)[1])
        db.append(spent)
        planning.append(planned)
    return {
        "pages": len(walls),
        "wall_p50_ms": statistics.median(walls),
        "cpu_p50_ms": statistics.median(cpus),
        "db_minute_queries_p50_ms": statistics.median(db) if db else None,
        "db_planning_p50_ms": statistics.median(planning) if planning else None,
        "tables_in_last_plan": sorted(set(re.findall(r"on (efs_metricminute\w*)", plan))),
    }


def expiry(now) -> dict:
    # apps' modules once main() has set Django up (django.setup())
    from django.db import connection, transaction

    from apps.efs import history
    from apps.efs.models import FileSystem, MetricMinute
    from apps.lib import partitions, retention

    later = now + timedelta(days=1)
    out: dict = {"partitioned": partitions.partitioned(MetricMinute)}
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM efs_metricminute")
        out["minute_rows"] = cursor.fetchone()[0]
    fss = list(FileSystem.objects.all())
    try:
        with transaction.atomic():
            hours, wall, cpu = timed(lambda: sum(history.rollup(fs, later) for fs in fss))
            out.update(rollup_hours=hours, rollup_wall_s=wall, rollup_cpu_s=cpu)
            done, wall, cpu = timed(lambda: retention.expire_all(later))
            out.update(expire_all=done, expire_wall_s=wall, expire_cpu_s=cpu)
            with connection.cursor() as cursor:
                cursor.execute("SELECT count(*) FROM efs_metricminute")
                out["minute_rows_after"] = cursor.fetchone()[0]
            raise Rollback
    except Rollback:
        pass
    if not out["partitioned"]:  # the rollup's own deletes of the same minutes, alone
        cutoff = history.minute_retention_start(later)
        try:
            with transaction.atomic():
                gone, wall, cpu = timed(
                    lambda: sum(
                        MetricMinute.objects.filter(filesystem=fs, ts__lt=cutoff).delete()[0]
                        for fs in fss
                    )
                )
                out.update(delete_rows=gone, delete_wall_s=wall, delete_cpu_s=cpu)
                raise Rollback
        except Rollback:
            pass
    return out


def against(url: str, filesystems: list[int], now) -> dict:
    # apps' modules once main() has set Django up (django.setup())
    import psycopg
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from apps.efs import history

    start = now - timedelta(hours=24)
    with CaptureQueriesContext(connection) as queries:
        step = history.chart_step(start, now, now)
        history.load_series(filesystems[0], start, now, step, now, history.CHART_FIELDS)
    sql = next(q["sql"] for q in queries.captured_queries if "efs_metricminute" in q["sql"])
    mark = f'"filesystem_id" = {filesystems[0]}'
    conns = {
        "this": psycopg.connect(os.environ["DATABASE_URL"]),
        "against": psycopg.connect(url),
    }
    times: dict[str, list[float]] = {name: [] for name in conns}
    for pk in filesystems * 2:
        for name, conn in conns.items():
            started = time.perf_counter()
            conn.execute(sql.replace(mark, f'"filesystem_id" = {pk}')).fetchall()
            times[name].append((time.perf_counter() - started) * 1000)
    return {
        name: {"p50_ms": statistics.median(t), "p90_ms": sorted(t)[int(len(t) * 0.9)]}
        for name, t in times.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default="")
    parser.add_argument("--seed", action="store_true", help="migrate and seed a fleet first")
    parser.add_argument("--filesystems", type=int, default=1000, help="with --seed")
    parser.add_argument("--days", type=int, default=30, help="with --seed")
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-expiry", action="store_true")
    parser.add_argument("--against", help="a database URL: the chart query alternately on both")
    parser.add_argument("--json", action="store_true")
    args = parse_args(parser, TINY)
    if not args.database_url and not args.seed:
        sys.exit("Without --database-url the database is a new temporary one: give --seed.")
    django_environment(args.database_url, "efs_partitions")
    import django

    django.setup()
    # apps' modules once main() has set Django up (django.setup())
    from django.core.management import call_command
    from django.utils import timezone

    from apps.demo.fleet import ACCOUNT_NAME
    from apps.efs.models import FileSystem

    if args.seed:
        call_command("migrate", interactive=False, verbosity=0)
        call_command(
            "seed_fleet",
            replace=True,
            filesystems=args.filesystems,
            days=args.days,
            regions=min(10, args.filesystems),
            clusters=0,  # only file systems are read here
            arrays=0,
            probes=0,
            verbosity=0,
        )
    ids = list(
        FileSystem.objects.filter(region__account__name=ACCOUNT_NAME)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    if not ids:
        sys.exit("No seeded fleet: run manage.py seed_fleet first.")
    every = max(1, len(ids) // args.pages)
    now = timezone.now()
    results = {"load_average": os.getloadavg()[0]}
    results["chart_24h"] = chart(ids[::every][: args.pages], now, args.repeat)
    if args.against:
        results["chart_24h_against"] = against(args.against, ids[::every][: args.pages] * 3, now)
    if not args.skip_expiry:
        results["expiry"] = expiry(now)
    results["load_average_after"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(results, default=str))
        return
    for name, value in results.items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()

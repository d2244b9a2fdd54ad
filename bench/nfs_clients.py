"""NFS clients at fleet scale: 1,000 clients with three EFS mounts each pushing once a minute.

    python bench/nfs_clients.py [--clients 1000] [--mounts 3] [--pushes 3] [--minutes 60]
                                [--page-requests 20] [--database-url URL]

Prints:
- the push's p50 and p95 through the whole Django stack (test client -> middleware -> DRF ->
  the client key's authentication -> the bounded body read -> parse -> attribution -> the
  increases written), ``--pushes`` rounds of every client (the first creates the rows);
- the rows a day keeps: minutes (clients x mounts x 1,440, ``NfsSample``) and hours (clients x
  mounts x 24, ``NfsHour``, whose first row in a range the page reads with each client's running
  totals, ``NfsTotal``), and their size in the database, measured on ``--minutes`` of minutes and
  a whole day of hours written in bulk (bytes of each table and its indexes per row);
- the file system page with every client of the fleet over 24 h, its clients' section worked out
  at each request: p50 and p95 against its 50 ms p95 goal, and its queries; the same page with
  that section from the cache (``VIGIL_PAGE_CACHE_SECONDS``, what most views get), and the
  clients' shares read alone.

Uses a temporary SQLite database unless ``--database-url`` is given (an empty database).

Measured 2026-11-26 on PostgreSQL 15, 2 cores shared with other work (load average 4-11, so the
wall times are the machine's more than the page's): ``python bench/nfs_clients.py
--database-url postgres://…/<empty database>``: page uncached p50 491.7 / p95 711.1 ms before
the running totals (``NfsTotal``), p50 109.7 / p95 139.2 ms after, at load 8-10; the same page
on the same history, before and after alternately at load 4-5: p50 94.4-109.0 / p95 110.0-138.3
ms before, p50 76.9-80.2 / p95 86.7-92.8 ms after (CPU p50 48-56 -> 42-44 ms). Its top clients'
query went from one row per client and hour (25,000 rows, 142 ms in EXPLAIN ANALYZE) to one per
client (20 ms). An hour row is 401 bytes with its indexes (290 before: the openings and one index
more).

Later the same day, at load 10-16 (other helpers' suites), with the CPU columns: page uncached
p50 768 / p95 1,423 ms wall, CPU in-process p50 68.3 / p95 75.2 ms and the database backend 43.5 ms
a request; with the clients' section cached, CPU in-process p50 41.6 / p95 51.7 ms and 5.5 ms in
the backend; the clients' shares alone 10.7 / 15.1 ms in-process and 27.5 ms in the backend. The
goal (p95 <= 50 ms) is met on neither clock on that machine: even with the clients' section
cached, the rest of the page costs about as much CPU as the goal. Judge it on CPU (in-process p95
plus the backend's), which other work on the machine does not inflate as it does wall time.

Session 6 (a full run, then old and new code alternately on its history, seven pairs of 20
requests, load average 3.4-5.9): page uncached CPU in-process p50 22-29 / p95 24-34 ms and the
backend 16-21 ms a request, old and new alike (the operations' rows now written without
``format_html``; its charts are empty here, so the charts' changes do not show): in-process p95 plus
the backend 38-54 ms, the goal met in most runs and missed in a few, at its edge. With the
clients' section cached, 11-16 / 13-20 ms and 1-2 ms. The top clients' query is most of the
backend (EXPLAIN ANALYZE ~25 ms): its 13 ``SUM() OVER ()`` take 3-5 ms of it, the rest is each of
the 1,000 clients' running totals less its opening hour, which the ranking needs anyway.
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

#: ``--tiny``: three clients, one push round after the first, an hour of history.
TINY = {"clients": 3, "pushes": 2, "minutes": 10, "page_requests": 3}
GOAL_MS = 50


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(pct / 100 * len(ordered)) - 1))]


def times_ms(values: list[float]) -> str:
    return (
        f"p50 {statistics.median(values) * 1000:.1f} ms, p95 {percentile(values, 95) * 1000:.1f} ms"
    )


class CpuClock:
    """CPU seconds spent on a request: this process's (``time.process_time``) and, when the
    database is a PostgreSQL server on this machine, its backend's for this connection (from
    ``/proc/<pid>/stat``, in clock ticks: averaged over many requests). On a machine shared
    with other work the wall times are the machine's more than the page's; CPU time is not."""

    def __init__(self, connection) -> None:
        self.backend = None
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                stat = Path(f"/proc/{cursor.fetchone()[0]}/stat")
            self.backend = stat if stat.exists() else None

    def database(self) -> float:
        if self.backend is None:
            return 0.0
        fields = self.backend.read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def measure(self, call, times: int) -> tuple[list[float], list[float], float | None]:
        """``call`` run ``times`` times: its wall and in-process CPU seconds each, and the
        database backend's CPU seconds a call on average (None when it cannot be read)."""
        wall, cpu = [], []
        db_before = self.database()
        for _ in range(times):
            started, cpu_started = time.perf_counter(), time.process_time()
            call()
            wall.append(time.perf_counter() - started)
            cpu.append(time.process_time() - cpu_started)
        db = (self.database() - db_before) / times if self.backend else None
        return wall, cpu, db


def cpu_ms(cpu: list[float], db: float | None) -> str:
    line = f"CPU in-process p50 {statistics.median(cpu) * 1000:.1f} ms, p95 {percentile(cpu, 95) * 1000:.1f} ms"
    if db is not None:
        line += f", database backend {db * 1000:.1f} ms a request"
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--mounts", type=int, default=3)
    parser.add_argument("--pushes", type=int, default=3)
    parser.add_argument("--minutes", type=int, default=60)
    parser.add_argument("--page-requests", type=int, default=20)
    parser.add_argument("--database-url", default="")
    args = parse_args(parser, TINY)
    django_environment(args.database_url, "nfs_clients")

    import django

    django.setup()
    # apps' modules once main() has set Django up (django.setup())
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from apps.efs import client_history
    from apps.efs.client_push import rebuild_totals
    from apps.efs.clients import COUNTERS
    from apps.efs.models import ClientKey, FileSystem, NfsHour, NfsMount, NfsSample
    from apps.regions.models import Region
    from tests.efs.builders import mountstats

    settings.ALLOWED_HOSTS = ["testserver"]
    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor}")
    site = Region.objects.create(kind=Region.Kind.SITE, code="bench", name="Bench")
    filesystems = [
        FileSystem.objects.create(region=site, filesystem_id=f"fs-{i:08x}", name=f"shared-{i}")
        for i in range(args.mounts)
    ]
    key = ClientKey.objects.create(name="bench").issue_token()
    http = Client()
    headers = {"HTTP_AUTHORIZATION": f"Bearer {key}"}

    def body(client: int, round_: int) -> str:
        text = "".join(
            mountstats(
                f"{fs.filesystem_id}.efs.us-east-1.amazonaws.com",
                read_bytes=(client + 1) * round_ * 1_000_000,
                write_bytes=round_ * 10_000,
                reads=(client + 1) * round_ * 10,
                writes=round_,
                mountpoint=f"/mnt/efs{m}",
            )
            for m, fs in enumerate(filesystems)
        )
        return json.dumps({"hostname": f"client-{client:05d}", "mountstats": text})

    push_times: list[float] = []
    for round_ in range(args.pushes):
        for client in range(args.clients):
            payload = body(client, round_)
            started = time.perf_counter()
            response = http.post(
                "/api/efs/clients/report", payload, content_type="application/json", **headers
            )
            elapsed = time.perf_counter() - started
            assert response.status_code == 200, response.content
            if round_:  # the first round creates the rows; later ones are the steady pushes
                push_times.append(elapsed)
    print(
        f"push: {times_ms(push_times)} over {len(push_times)} pushes of "
        f"{args.mounts} mounts ({len(payload) // 1024} KiB each)"
    )

    # History: --minutes of every mount's increase once a minute, and a day of hours.
    now = timezone.now()
    mounts = list(NfsMount.objects.values_list("pk", "client_id", "filesystem_id"))
    started = time.perf_counter()
    batch = []
    for minute in range(args.minutes):
        at = now - timedelta(minutes=minute + args.pushes)
        for pk, client_id, fs_id in mounts:
            values = dict.fromkeys(COUNTERS, 1000 + client_id)
            batch.append(
                NfsSample(
                    mount_id=pk,
                    client_id=client_id,
                    filesystem_id=fs_id,
                    time=at,
                    seconds=60,
                    **values,
                )
            )
        if len(batch) >= 20_000:
            NfsSample.objects.bulk_create(batch)
            batch = []
    NfsSample.objects.bulk_create(batch)
    hour = now.replace(minute=0, second=0, microsecond=0)
    hours = [
        NfsHour(
            filesystem_id=fs_id, client_id=client_id, hour=hour - timedelta(hours=h + 1),
            seconds=3600, **dict.fromkeys(COUNTERS, 60_000 + client_id),
        )
        for h in range(24)
        for _, client_id, fs_id in mounts
    ]  # fmt: skip
    NfsHour.objects.bulk_create(hours, batch_size=20_000)
    rebuild_totals()  # the running totals and openings the pushes would have written
    written = time.perf_counter() - started
    sizes = {}
    for model, per_day in (
        (NfsSample, args.clients * args.mounts * 1440),
        (NfsHour, args.clients * args.mounts * 24),
    ):
        rows = model.objects.count()
        line = f"{model.__name__}: {rows} rows; a day keeps {per_day}"
        if connection.vendor == "postgresql":
            table = model._meta.db_table
            with connection.cursor() as cursor:
                # compacted first: the openings worked out above rewrote every hour row
                cursor.execute(f"VACUUM (FULL, ANALYZE) {table}")
                cursor.execute("SELECT pg_total_relation_size(%s)", [table])
                size = cursor.fetchone()[0]
            line += f", {size / rows * per_day / 2**20:.1f} MiB at {size / rows:.0f} bytes a row"
        sizes[model.__name__] = line
    print(f"history written in {written:.1f} s")
    for line in sizes.values():
        print(line)

    admin = get_user_model().objects.create_superuser("bench", "bench@example.com", "x")
    http.force_login(admin)
    fs = filesystems[0]
    url = f"/efs/filesystems/{fs.pk}/?range=24h"
    http.get(url)  # the 30 days behind the mode comparison: cached an hour, not measured here

    clock = CpuClock(connection)

    def page(cache_seconds: int) -> tuple[tuple, int, int]:
        """The page's times with the clients' section kept ``cache_seconds`` (0: worked out at
        every request, what a viewer after each expiry waits for), its queries and size."""
        settings.VIGIL_PAGE_CACHE_SECONDS = cache_seconds
        response = http.get(url)
        measured = clock.measure(lambda: http.get(url), args.page_requests)
        assert response.status_code == 200
        with CaptureQueriesContext(connection) as captured:
            http.get(url)
        return measured, len(captured.captured_queries), len(response.content) // 1024

    cache_seconds = settings.VIGIL_PAGE_CACHE_SECONDS
    (page_times, page_cpu, page_db), queries, size = page(0)
    (cached_times, cached_cpu, cached_db), cached_queries, _ = page(cache_seconds)
    share_times, share_cpu, share_db = clock.measure(
        lambda: client_history.client_shares(fs, now - timedelta(hours=24), now, now),
        args.page_requests,
    )
    shares = client_history.client_shares(fs, now - timedelta(hours=24), now, now)
    load = "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    met = percentile(page_times, 95) * 1000 <= GOAL_MS
    cpu_met = (percentile(page_cpu, 95) + (page_db or 0)) * 1000 <= GOAL_MS
    print(
        f"page with {len(shares['rows'])} rows of {shares['clients']} clients over 24 h: "
        f"{times_ms(page_times)} (goal p95 <= {GOAL_MS} ms: {'met' if met else 'not met'} "
        f"on wall time), {queries} queries, {size} KiB; {load}"
    )
    print(
        f"  {cpu_ms(page_cpu, page_db)} (goal on CPU, in-process p95 + backend: "
        f"{'met' if cpu_met else 'not met'})"
    )
    print(
        f"page with its clients' section cached ({cache_seconds} s): {times_ms(cached_times)}, "
        f"{cached_queries} queries; {cpu_ms(cached_cpu, cached_db)}"
    )
    print(f"clients' shares alone: {times_ms(share_times)}; {cpu_ms(share_cpu, share_db)}")


if __name__ == "__main__":
    main()

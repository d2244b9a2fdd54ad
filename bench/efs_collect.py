"""One EFS collection cycle for a fleet of file systems against a stand-in that enforces
CloudWatch's GetMetricData limits, with where its time goes.

    python bench/efs_collect.py [--filesystems 1000] [--regions 10] [--minutes 5]
                                [--workers 2] [--repeat 1] [--throttle-every 0]
                                [--latency-ms 0] [--database-url URL] [--json] [--tiny]

The stand-in runs in its own process (a moto server on loopback with ``apps.efs.demo_cloudwatch``'s
responder: at most 500 queries and 100,800 data points per call, MaxDatapoints with
NextToken, optional ThrottlingException every n-th call and latency), so it does not share
the collector's interpreter, and boto3 talks to it over HTTP with the real wire protocol.
The file systems are created in it with boto3 and discovered with the product's discovery.

Then, as ``make run``'s worker would (``--workers`` processes), the real task
``collect_region`` runs once per account-region: GetMetricData over the window, rows saved,
every file system judged. Three cycles are measured: the first (the 3 h first look-back,
which fills the history), the steady one over the last ``--minutes`` (most cycles; run
``--repeat`` times, the median printed; goal 5 s at 1,000 file systems, 60 s at 10,000), and
the hourly late-look cycle (the same, and the minutes of the last ``--late-minutes`` asked
again in the same calls, gaps filled). Each prints its wall time, the collector's CPU (every
worker process), the stand-in's CPU (its own process: time the goal measures but Vigil does
not spend) and the split the task reports (``collect.run_cycle``'s "seconds": discovery,
fetch, parse, save, roll-up, pricing, judge, other; wall and CPU summed over the regions).
Also printed: API calls per account-region against ceil(queries / 500), metrics requested
against a YACE-style request (Sum + SampleCount + Average of every metric), peak RSS, and a
naive GetMetricStatistics-per-metric run measured on 100 file systems. Uses a temporary
SQLite database unless --database-url is given (an empty database: the bench creates its
fleet there). ``--tiny``: 20 file systems in 2 regions.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.environment import parse_args  # noqa: E402

TINY = {"filesystems": 20, "regions": 2}

REGIONS = [
    "us-east-1", "us-east-2", "us-west-1", "us-west-2", "eu-west-1",
    "eu-west-2", "eu-central-1", "ap-southeast-1", "ap-southeast-2", "ap-northeast-1",
    "sa-east-1", "ca-central-1",
]  # fmt: skip
PROFILE_KEYS = ["draining", "io-bound", "build-cache", "web-assets", "nightly-backup",
                "archive", "scratch", "analytics", "elastic", "provisioned"]  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- The stand-in process ---------------------------------------------------------------


def serve(port: int, control_port: int, throttle_every: int, latency_ms: float) -> None:
    """Run the moto server with the fleet responder, plus a control port for the counts."""
    # apps' modules once main() has set Django up (django.setup())
    import logging
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from moto.server import ThreadedMotoServer

    from apps.efs import demo_cloudwatch

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    # moto warns that CloudWatch's model has no ThrottlingException shape; botocore still
    # reads the code from the answer and retries it.
    warnings.filterwarnings("ignore", message=".*does not match an error shape")
    faults = demo_cloudwatch.Faults(latency_s=latency_ms / 1000, throttle_every=throttle_every)
    responder = demo_cloudwatch.install(demo_cloudwatch.FleetResponder(faults=faults))
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()

    class Control(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            usage = resource.getrusage(resource.RUSAGE_SELF)
            body = json.dumps(
                {
                    "calls": dict(responder.calls),
                    "throttled": dict(responder.throttled),
                    "cpu_s": usage.ru_utime + usage.ru_stime,
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            responder.reset_counts()
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    print("READY", flush=True)
    ThreadingHTTPServer(("127.0.0.1", control_port), Control).serve_forever()


def control(port: int, method: str = "GET") -> dict:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/", method=method)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"{}")


# --- The collector ---------------------------------------------------------------------


def _collect(pk: int, code: str) -> tuple[str, dict, float]:
    """One region's task in a worker process: its result and CPU seconds."""
    # apps' modules once main() has set Django up (django.setup())
    from django.db import connections

    from apps.efs import tasks

    cpu = time.process_time()
    connections.close_all()  # as Celery's Django fix-up does between tasks
    result = tasks.collect_region(pk, region=code)
    return code, result or {}, time.process_time() - cpu


_pool: ProcessPoolExecutor | None = None


def workers_pool(workers: int) -> ProcessPoolExecutor:
    """The worker processes, forked once and kept for every cycle, as a Celery worker's
    pool is (what a process caches, such as boto3's models, stays warm)."""
    global _pool
    if _pool is None:
        import multiprocessing

        from django.db import connections

        # A forked worker closing the parent's PostgreSQL connection would end it for both.
        connections.close_all()
        _pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
    return _pool


#: The parts of a cycle, in the order printed (``collect.run_cycle``'s "seconds").
PARTS = ("discovery", "fetch", "parse", "save", "roll-up", "pricing", "judge", "other")


@dataclass
class Cycle:
    """One cycle over every account-region: its wall time, the collector's CPU (every worker
    process), the stand-in's CPU (moto, its own process), and the split summed over regions."""

    results: dict[str, dict]
    wall: float
    cpu: float
    standin_cpu: float
    load: float

    @property
    def split(self) -> dict[str, dict[str, float]]:
        out = {part: {"wall": 0.0, "cpu": 0.0} for part in PARTS}
        for result in self.results.values():
            for part, spent in (result.get("seconds") or {}).items():
                for kind in ("wall", "cpu"):
                    out.setdefault(part, {"wall": 0.0, "cpu": 0.0})[kind] += spent[kind]
        return out

    def summary(self) -> dict:
        return {
            "wall_s": round(self.wall, 3),
            "collector_cpu_s": round(self.cpu, 3),
            "standin_cpu_s": round(self.standin_cpu, 3),
            "load_average": round(self.load, 2),
            "split": {
                part: {k: round(v, 3) for k, v in spent.items()}
                for part, spent in self.split.items()
            },
        }

    def total(self, key: str) -> int:
        return sum(r.get(key, 0) for r in self.results.values())


def cycle(collections: list[tuple[int, str]], workers: int, control_port: int) -> Cycle:
    standin_before = control(control_port)["cpu_s"]
    pool = workers_pool(workers) if workers > 1 else None
    started = time.perf_counter()
    if pool is None:
        done = [_collect(pk, code) for pk, code in collections]
    else:
        done = list(pool.map(_collect, *zip(*collections, strict=True)))
    wall = time.perf_counter() - started
    cpu = sum(spent for _, _, spent in done)
    standin_cpu = control(control_port)["cpu_s"] - standin_before
    results = {code: result for code, result, _ in done}
    return Cycle(results, wall, cpu, standin_cpu, os.getloadavg()[0])


def print_cycle(title: str, c: Cycle, filesystems: int, goal: float | None = None) -> None:
    """The cycle's figures and where its time went (summed over the account-regions: with
    several workers the walls add up to more than the cycle's)."""
    met = (
        ""
        if goal is None
        else f" (goal {'<=' if goal <= 5 else '<'} {goal:g} s: "
        + ("met)" if c.wall <= goal else "not met)")
    )
    print(f"{title}: wall {c.wall:.2f} s{met}, collector CPU {c.cpu:.2f} s "
          f"({c.cpu / filesystems * 1000:.2f} ms per file system), stand-in CPU "
          f"{c.standin_cpu:.2f} s, load average {c.load:.1f}")  # fmt: skip
    split = c.split
    wall_sum = sum(p["wall"] for p in split.values()) or 1.0
    cpu_sum = sum(p["cpu"] for p in split.values()) or 1.0
    print(f"    {'part':<11}{'wall s':>8}{'share':>7}{'CPU s':>8}{'share':>7}"
          f"{'CPU ms/fs':>10}")  # fmt: skip
    for part, spent in split.items():
        if not spent["wall"] and not spent["cpu"]:
            continue
        print(f"    {part:<11}{spent['wall']:>8.2f}{spent['wall'] / wall_sum * 100:>6.0f}%"
              f"{spent['cpu']:>8.2f}{spent['cpu'] / cpu_sum * 100:>6.0f}%"
              f"{spent['cpu'] / filesystems * 1000:>10.3f}")  # fmt: skip


def create_fleet(url: str, regions: list[str], per_region: int) -> None:
    # apps' modules once main() has set Django up (django.setup())
    import boto3

    from apps.efs.demo_cloudwatch import PHASE_TAG, PROFILE_TAG

    def one_region(code: str) -> None:
        efs = boto3.client("efs", region_name=code, endpoint_url=url)
        for i in range(per_region):
            key = PROFILE_KEYS[i % len(PROFILE_KEYS)]
            efs.create_file_system(
                CreationToken=f"bench-{code}-{i}",
                ThroughputMode="elastic" if key == "elastic" else "bursting",
                Tags=[
                    {"Key": "Name", "Value": f"bench-{code}-{i:04d}"},
                    {"Key": PROFILE_TAG, "Value": key},
                    {"Key": PHASE_TAG, "Value": str((i * 97) % 1440)},
                ],
            )

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(one_region, regions))


def naive_statistics(url: str, code: str, refs, minutes: int) -> tuple[int, float]:
    """GetMetricStatistics, one call per metric (and storage class) per file system."""
    # apps' modules once main() has set Django up (django.setup())
    from datetime import UTC, datetime

    import boto3

    from apps.efs.cloudwatch_plan import specs_for

    cw = boto3.client("cloudwatch", region_name=code, endpoint_url=url)
    end = datetime.fromtimestamp(time.time() // 60 * 60 - 180, UTC)
    calls = 0
    started = time.perf_counter()
    for ref in refs:
        metrics: dict[tuple[str, str | None], set[str]] = {}
        for spec in specs_for(ref):
            metrics.setdefault((spec.metric, spec.storage_class), set()).add(spec.stat)
        for (metric, storage_class), stats in metrics.items():
            dims = [{"Name": "FileSystemId", "Value": ref.id}]
            if storage_class:
                dims.append({"Name": "StorageClass", "Value": storage_class})
            cw.get_metric_statistics(
                Namespace="AWS/EFS",
                MetricName=metric,
                Dimensions=dims,
                StartTime=end - timedelta(minutes=minutes),
                EndTime=end,
                Period=60,
                Statistics=sorted(stats),
            )
            calls += 1
    return calls, time.perf_counter() - started


# --- What other collectors would ask, for comparison --------------------------------------

#: What a YACE-style job asks of every metric.
YACE_STATISTICS = ("Sum", "SampleCount", "Average")
#: Datapoints one GetMetricStatistics call may return.
MAX_DATAPOINTS_PER_STATISTICS_CALL = 1_440


def yace_style_query_count(filesystems) -> int:
    """What a YACE-style job asks for the same file systems: every metric (the five IOBytes
    metrics, PercentIOLimit, BurstCreditBalance, PermittedThroughput, ClientConnections, and
    StorageBytes per class) with Sum, SampleCount and Average, whatever the mode."""
    from apps.efs.cloudwatch_plan import SPECS  # why: apps load after django.setup()

    count = 0
    for fs in filesystems:
        metrics = {(s.metric, s.storage_class) for s in SPECS if s.storage_class is None}
        metrics |= {("StorageBytes", c) for c in fs.storage_classes}
        count += len(metrics) * len(YACE_STATISTICS)
    return count


def get_metric_statistics_call_count(filesystems, periods: int) -> int:
    """Calls a naive GetMetricStatistics-per-metric collector makes over ``periods`` periods:
    one per metric and dimension set (all its statistics in one call), at most 1,440 points."""
    from apps.efs.cloudwatch_plan import specs_for  # why: apps load after django.setup()

    per_metric = max(1, math.ceil(periods / MAX_DATAPOINTS_PER_STATISTICS_CALL))
    return sum(
        len({(s.metric, s.storage_class) for s in specs_for(fs)}) * per_metric for fs in filesystems
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filesystems", type=int, default=1000)
    parser.add_argument("--regions", type=int, default=10)
    parser.add_argument("--minutes", type=int, default=5, help="the steady cycle's window")
    parser.add_argument(
        "--late-minutes", type=int, default=60, help="the late look (VIGIL_EFS_LATE_DATA_MINUTES)"
    )
    parser.add_argument("--workers", type=int, default=2, help="collector processes")
    parser.add_argument("--repeat", type=int, default=1, help="steady cycles to run (median)")
    parser.add_argument("--throttle-every", type=int, default=0)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--database-url", default="")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--serve", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parse_args(parser, TINY)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    os.environ.update(
        {
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench",
            "AWS_EC2_METADATA_DISABLED": "true",
            "VIGIL_DEMO": "false",
            "VIGIL_EFS_LATE_DATA_MINUTES": str(args.late_minutes),
            "CELERY_BROKER_URL": "memory://",
            "LOG_LEVEL": "WARNING",
        }
    )
    if args.serve:
        import django

        django.setup()
        serve(args.serve[0], args.serve[1], args.throttle_every, args.latency_ms)
        return

    work = Path(tempfile.mkdtemp(prefix="vigil-bench-efs-"))
    os.environ["DATABASE_URL"] = args.database_url or f"sqlite:///{work / 'bench.sqlite3'}"
    port, control_port = free_port(), free_port()
    url = f"http://127.0.0.1:{port}"
    os.environ["AWS_ENDPOINT_URL"] = url
    standin = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), str(control_port),
         "--throttle-every", str(args.throttle_every), "--latency-ms", str(args.latency_ms)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert standin.stdout is not None and standin.stdout.readline().strip() == "READY"
        run(args, url, control_port)
    finally:
        standin.terminate()
        standin.wait(10)
        shutil.rmtree(work, ignore_errors=True)


def run(args: argparse.Namespace, url: str, control_port: int) -> None:
    import django

    django.setup()
    # apps' modules once main() has set Django up (django.setup())
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from apps.efs import collect, elasticfilesystem
    from apps.efs.cloudwatch_plan import build_queries
    from apps.efs.models import FileSystem, MetricMinute, RegionCollection
    from apps.lib import cloudwatch
    from apps.lib.cloudwatch import align, min_calls
    from apps.regions.models import Account, Region

    call_command("migrate", interactive=False, verbosity=0)
    regions = REGIONS[: args.regions]
    per_region = args.filesystems // len(regions)
    t = time.perf_counter()
    create_fleet(url, regions, per_region)
    create_s = time.perf_counter() - t

    account = Account.objects.create(name="Bench account")
    collections = []
    t = time.perf_counter()
    now = timezone.now()
    for code in regions:
        region = Region.objects.create(
            account=account, code=code, opt_in_status="opt-in-not-required"
        )
        rc = RegionCollection.objects.create(region=region, next_discovery=now + timedelta(hours=1))
        collect.save_discovery(
            rc, elasticfilesystem.describe_file_systems(code, account.access), now
        )
        collections.append((rc.pk, code))
    discovery_s = time.perf_counter() - t
    # The forked workers start as a worker that has run before: each region's CloudWatch
    # client made once (loading botocore's models: some 40 ms of CPU per region, paid once
    # per worker process and region, not per cycle).
    for code in regions:
        cloudwatch.client(code, account.access)

    goal = 5.0 if args.filesystems <= 1000 else 60.0 if args.filesystems <= 10_000 else None
    n = per_region * len(regions)
    # First cycle: the 3 h look-back of newly discovered file systems (fills the history).
    control(control_port, "POST")
    first = cycle(collections, args.workers, control_port)
    first_calls = sum(control(control_port)["calls"].values())

    # Steady cycles: every file system collected up to ``--minutes`` ago, its new minutes not
    # stored yet; no late look due (most cycles).
    now = timezone.now()
    start = align(now - timedelta(minutes=3)) - timedelta(minutes=args.minutes)
    late = timedelta(minutes=args.late_minutes)

    def steady(look: bool) -> Cycle:
        FileSystem.objects.update(collected_until=start)
        MetricMinute.objects.filter(ts__gte=start).delete()
        rows_before[0] = MetricMinute.objects.count()
        if look:
            RegionCollection.objects.update(next_late_look=now, late_look_from=start - late)
        else:
            RegionCollection.objects.update(next_late_look=now + late)
        control(control_port, "POST")
        return cycle(collections, args.workers, control_port)

    rows_before = [0]
    plains = [steady(False) for _ in range(max(1, args.repeat))]
    plain_calls = sum(control(control_port)["calls"].values())
    plain = sorted(plains, key=lambda c: c.wall)[len(plains) // 2]  # the median

    # The hourly late-look cycle: the same, and the minutes collected since the last look
    # (an hour ago) asked again in the same calls. One minute of the look's span left empty,
    # as if CloudWatch had sent it late: the look must fill it.
    emptied = MetricMinute.objects.filter(ts=start - late / 2).delete()[0]
    looked = steady(True)
    counts = control(control_port)
    rows = MetricMinute.objects.count() - rows_before[0]
    late_rows = looked.total("late_rows")

    refs = {
        code: [fs.ref() for fs in FileSystem.objects.filter(region__code=code)] for code in regions
    }
    queries = {code: len(build_queries(r)) for code, r in refs.items()}
    all_refs = [r for rs in refs.values() for r in rs]
    metrics_requested = sum(queries.values())
    yace = yace_style_query_count(all_refs)
    api_calls = sum(counts["calls"].values())
    min_api_calls = sum(min_calls(q) for q in queries.values())
    sampled = refs[regions[0]][:100]
    naive_calls, naive_s = naive_statistics(url, regions[0], sampled, args.minutes)
    naive_total = get_metric_statistics_call_count(all_refs, args.minutes)
    if _pool is not None:
        _pool.shutdown()  # reaped: their peak RSS is counted
    peak_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    peak_children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    statuses: dict[str, int] = {}
    for result in looked.results.values():
        for status, count in (result.get("statuses") or {}).items():
            statuses[status] = statuses.get(status, 0) + count

    print(f"fleet: {n} file systems in {len(regions)} regions, {args.workers} worker "
          f"processes, {os.cpu_count()} cores, {connection.vendor} "
          f"(created in {create_s:.1f} s, discovered in {discovery_s:.1f} s)")  # fmt: skip
    print_cycle(f"first cycle (3 h look-back, {first_calls} calls)", first, n)
    for i, c in enumerate(plains):
        if len(plains) > 1:
            print(f"  steady run {i + 1}: wall {c.wall:.2f} s, collector CPU {c.cpu:.2f} s, "
                  f"stand-in CPU {c.standin_cpu:.2f} s, load average {c.load:.1f}")  # fmt: skip
    median = " (median run)" if len(plains) > 1 else ""
    print_cycle(f"steady cycle ({args.minutes} min window){median}", plain, n, goal)
    print_cycle(
        f"hourly late-look cycle ({args.minutes} min + the last {args.late_minutes} min "
        "asked again)",
        looked,
        n,
    )
    own = plain.cpu / plain.wall / max(1, args.workers) * 100
    print(f"  the steady cycle's wall, {plain.wall:.2f} s, is the collector's CPU "
          f"{plain.cpu:.2f} s on {args.workers} workers ({own:.0f} % of their time) plus waiting "
          f"for the stand-in (its CPU {plain.standin_cpu:.2f} s, one process) and the "
          f"database")  # fmt: skip
    print(f"  {'region':<16}{'queries':>8}{'calls':>7}{'ceil(q/500)':>12}{'throttled':>10}")
    for code in regions:
        print(f"  {code:<16}{queries[code]:>8}{counts['calls'].get(code, 0):>7}"
              f"{min_calls(queries[code]):>12}{counts['throttled'].get(code, 0):>10}")  # fmt: skip
    print(f"  API calls {api_calls} with the late look, {plain_calls} without "
          f"(minimum {min_api_calls}); minute rows added {rows}; gaps filled by the look "
          f"{late_rows} of {emptied} emptied; statuses {statuses}")  # fmt: skip
    print(f"  metrics requested {metrics_requested} vs YACE-style {yace}: "
          f"{metrics_requested / yace:.2f}x (goal <= 0.67x); peak RSS {peak_self:.0f} MB "
          f"(workers {peak_children:.0f} MB)")  # fmt: skip
    print(f"naive GetMetricStatistics: {naive_calls} calls for {len(sampled)} file systems in "
          f"{naive_s:.1f} s; {naive_total} calls for the fleet (about "
          f"{naive_s * naive_total / naive_calls:.0f} s at that rate, one call at a time) "
          f"vs {api_calls}")  # fmt: skip
    if args.json:
        print(json.dumps({
            "filesystems": n,
            "regions": len(regions),
            "window_minutes": args.minutes,
            "workers": args.workers,
            "cpus": os.cpu_count(),
            "database": connection.vendor,
            "first_cycle": first.summary(),
            "steady_cycle": plain.summary(),
            "steady_runs": [c.summary() for c in plains],
            "late_look_cycle": looked.summary(),
            "api_calls": api_calls,
            "api_calls_without_late_look": plain_calls,
            "late_look_minutes": args.late_minutes,
            "late_rows": late_rows,
            "late_rows_emptied": emptied,
            "min_api_calls": min_api_calls,
            "api_calls_per_region": counts["calls"],
            "throttled": sum(counts["throttled"].values()),
            "metrics_requested": metrics_requested,
            "yace_metrics_requested": yace,
            "peak_rss_mb": round(max(peak_self, peak_children), 1),
            "rows_saved": rows,
            "naive_statistics_calls": naive_total,
            "ceil_check": all(
                counts["calls"].get(c, 0) == math.ceil(queries[c] / 500) for c in regions
            ) if not args.throttle_every else None,
        }))  # fmt: skip


if __name__ == "__main__":
    main()

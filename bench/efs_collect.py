"""One EFS collection cycle for a fleet of file systems against a stand-in that enforces
CloudWatch's GetMetricData limits.

    python bench/efs_collect.py [--filesystems 1000] [--regions 10] [--minutes 5]
                                [--workers 2] [--throttle-every 0] [--latency-ms 0] [--json]

The stand-in runs in its own process (a moto server on loopback with ``apps.efs.standin``'s
responder: at most 500 queries and 100,800 data points per call, MaxDatapoints with
NextToken, optional ThrottlingException every n-th call and latency), so it does not share
the collector's interpreter, and boto3 talks to it over HTTP with the real wire protocol.
The file systems are created in it with boto3 and discovered with the product's discovery.

Then, as ``make run``'s worker would (``--workers`` processes), the real task
``collect_region`` runs once per account-region: GetMetricData over the window, rows saved,
every file system judged. A first cycle (the 3 h first look-back) fills the history; the
timed cycle is the steady one over the last ``--minutes`` in which the hourly late look is
due (the minutes of the last ``--late-minutes`` asked again in the same calls, gaps filled);
it is run again without the look (most cycles), for the call count it must not exceed.
Printed: API calls per
account-region against ceil(queries / 500), metrics requested against a YACE-style request
(Sum + SampleCount + Average of every metric), wall time, peak RSS, and a naive
GetMetricStatistics-per-metric run measured on one region. Uses a temporary SQLite database
unless --database-url is given.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

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
    import logging
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from moto.server import ThreadedMotoServer

    from apps.efs import standin

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    # moto warns that CloudWatch's model has no ThrottlingException shape; botocore still
    # reads the code from the answer and retries it.
    warnings.filterwarnings("ignore", message=".*does not match an error shape")
    faults = standin.Faults(latency_s=latency_ms / 1000, throttle_every=throttle_every)
    responder = standin.install(standin.FleetResponder(faults=faults))
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()

    class Control(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(
                {"calls": dict(responder.calls), "throttled": dict(responder.throttled)}
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
    from django.db import connections

    from apps.efs import tasks

    connections.close_all()
    started = time.perf_counter()
    result = tasks.collect_region(pk, region=code)
    return code, result or {}, time.perf_counter() - started


# Where a cycle's time goes: (label, module path suffix, function), cumulative per call tree.
# "- " labels are part of the one above (the CloudWatch calls run in threads, which cProfile
# does not follow: they are the metrics step less its saving).
SPLIT = (
    ("discovery", "apps/efs/collect.py", "save_discovery"),
    ("discovery", "apps/efs/efs_api.py", "describe_file_systems"),
    ("metrics", "apps/efs/collect.py", "collect_metrics"),
    ("- saving rows", "apps/efs/history.py", "save_samples"),
    ("judging", "apps/efs/collect.py", "judge_region"),
    ("- status changes", "apps/alerts/transitions.py", "record"),
    ("mode comparisons", "apps/efs/pricing.py", "price_region"),
    ("roll-up", "apps/efs/history.py", "rollup"),
    ("whole task", "apps/efs/tasks.py", "collect_region"),
)


def _collect_profiled(pk: int, code: str) -> dict[str, float]:
    """``collect_region`` under cProfile: cumulative seconds of each ``SPLIT`` function."""
    import cProfile
    import pstats

    from django.db import connections

    from apps.efs import tasks

    connections.close_all()
    profile = cProfile.Profile()
    profile.runcall(tasks.collect_region, pk, region=code)
    stats = pstats.Stats(profile).stats
    out = dict.fromkeys((label for label, _, _ in SPLIT), 0.0)
    for (filename, _, function), (_, _, _, cumulative, _) in stats.items():
        for label, suffix, name in SPLIT:
            if function == name and filename.endswith(suffix):
                out[label] += cumulative
    return out


def split_cycle(collections: list[tuple[int, str]], workers: int) -> dict[str, float]:
    """The seconds of each part of a steady cycle, summed over every account-region."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max(1, workers), mp_context=ctx) as pool:
        parts = list(pool.map(_collect_profiled, *zip(*collections, strict=True)))
    return {label: sum(p[label] for p in parts) for label, _, _ in SPLIT}


def cycle(collections: list[tuple[int, str]], workers: int) -> tuple[dict, float]:
    from django.db import connections

    connections.close_all()
    started = time.perf_counter()
    cpu_before = _cpu()
    if workers <= 1:
        done = [_collect(pk, code) for pk, code in collections]
    else:
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            done = list(pool.map(_collect, *zip(*collections, strict=True)))
    wall = time.perf_counter() - started
    results = {code: result for code, result, _ in done}
    results["_cpu_s"] = _cpu() - cpu_before
    return results, wall


def _cpu() -> float:
    """CPU seconds of this process and of its reaped children (the worker processes)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def create_fleet(url: str, regions: list[str], per_region: int) -> None:
    import boto3

    from apps.efs.standin import PHASE_TAG, PROFILE_TAG

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filesystems", type=int, default=1000)
    parser.add_argument("--regions", type=int, default=10)
    parser.add_argument("--minutes", type=int, default=5, help="the steady cycle's window")
    parser.add_argument(
        "--late-minutes", type=int, default=60, help="the late look (VIGIL_EFS_LATE_DATA_MINUTES)"
    )
    parser.add_argument("--workers", type=int, default=2, help="collector processes")
    parser.add_argument("--throttle-every", type=int, default=0)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--database-url", default="")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--serve", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()

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


def run(args: argparse.Namespace, url: str, control_port: int) -> None:
    import django

    django.setup()
    from django.core.management import call_command
    from django.utils import timezone

    from apps.efs import collect, elasticfilesystem
    from apps.efs.cloudwatch_plan import (
        align,
        build_queries,
        get_metric_statistics_call_count,
        min_calls,
        yace_style_query_count,
    )
    from apps.efs.models import FileSystem, MetricMinute, RegionCollection
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

    # First cycle: the 3 h look-back of newly discovered file systems (fills the history).
    first, first_wall = cycle(collections, args.workers)
    first_calls = control(control_port)["calls"]
    # Steady cycle: every file system collected up to ``--minutes`` ago, the late look due
    # (it asks again for the minutes collected since the last look, an hour ago).
    now = timezone.now()
    start = align(now - timedelta(minutes=3)) - timedelta(minutes=args.minutes)
    late = timedelta(minutes=args.late_minutes)
    FileSystem.objects.update(collected_until=start)
    RegionCollection.objects.update(next_late_look=now, late_look_from=start - late)
    # One minute of the look's span left empty, as if CloudWatch had sent it late: the look
    # must fill it.
    emptied = MetricMinute.objects.filter(ts=start - late / 2).delete()[0]
    control(control_port, "POST")
    rows_before = MetricMinute.objects.count()
    results, wall = cycle(collections, args.workers)
    counts = control(control_port)
    rows = MetricMinute.objects.count() - rows_before
    cpu_s = results.pop("_cpu_s")
    first.pop("_cpu_s")
    load = os.getloadavg()[0]
    late_rows = sum(r.get("late_rows", 0) for r in results.values())

    # The same steady cycle with no late look due (most cycles): the floor the look must keep.
    looked = args.late_minutes
    FileSystem.objects.update(collected_until=start)
    RegionCollection.objects.update(next_late_look=now + late)
    control(control_port, "POST")
    plain, plain_wall = cycle(collections, args.workers)
    plain_cpu = plain.pop("_cpu_s")
    plain_calls = sum(control(control_port)["calls"].values())

    # The same steady cycle once more under cProfile (slower: its shares, not its seconds).
    FileSystem.objects.update(collected_until=start)
    split = split_cycle(collections, args.workers)

    refs = {
        code: [fs.ref() for fs in FileSystem.objects.filter(region__code=code)] for code in regions
    }
    queries = {code: len(build_queries(r)) for code, r in refs.items()}
    all_refs = [r for rs in refs.values() for r in rs]
    metrics_requested = sum(queries.values())
    yace = yace_style_query_count(all_refs)
    api_calls = sum(counts["calls"].values())
    min_api_calls = sum(min_calls(q) for q in queries.values())
    naive_calls, naive_s = naive_statistics(url, regions[0], refs[regions[0]], args.minutes)
    naive_total = get_metric_statistics_call_count(all_refs, args.minutes)
    peak_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    peak_children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    statuses: dict[str, int] = {}
    for result in results.values():
        for status, n in (result.get("statuses") or {}).items():
            statuses[status] = statuses.get(status, 0) + n

    print(f"fleet: {len(all_refs)} file systems in {len(regions)} regions "
          f"(created in {create_s:.1f} s, discovered in {discovery_s:.1f} s)")  # fmt: skip
    print(f"first cycle (3 h look-back): {first_wall:.2f} s, "
          f"{sum(first_calls.values())} GetMetricData calls")  # fmt: skip
    print(f"steady cycle ({args.minutes} min window + the hourly {looked} min late look, "
          f"{args.workers} worker processes):")  # fmt: skip
    print(f"  {'region':<16}{'queries':>8}{'calls':>7}{'ceil(q/500)':>12}{'throttled':>10}")
    for code in regions:
        print(f"  {code:<16}{queries[code]:>8}{counts['calls'].get(code, 0):>7}"
              f"{min_calls(queries[code]):>12}{counts['throttled'].get(code, 0):>10}")  # fmt: skip
    print(
        f"  API calls {api_calls} (minimum {min_api_calls}); minute rows added {rows}; statuses {statuses}"
    )
    print(f"  late look: {api_calls} calls with it, {plain_calls} without "
          f"(minimum {min_api_calls}); gaps filled by it {late_rows} of {emptied} emptied; "
          f"wall {wall:.2f} s with, {plain_wall:.2f} s without; collector CPU "
          f"{cpu_s:.2f} s with, {plain_cpu:.2f} s without")  # fmt: skip
    print(f"  metrics requested {metrics_requested} vs YACE-style {yace}: "
          f"{metrics_requested / yace:.2f}x (goal <= 0.67x)")  # fmt: skip
    print(f"  wall {wall:.2f} s (goal 5 s on 2 cores), collector CPU {cpu_s:.2f} s, "
          f"load average {load:.1f}; peak RSS {peak_self:.0f} MB "
          f"(workers {peak_children:.0f} MB)")  # fmt: skip
    whole = split.pop("whole task") or 1.0
    print(f"  where a steady cycle's time goes (cProfile, per file system at this cycle's wall "
          f"{wall / len(all_refs) * 1000:.2f} ms):")  # fmt: skip
    for label, seconds in split.items():
        share = seconds / whole
        print(f"    {label:<18}{share * 100:>6.1f} %{share * wall / len(all_refs) * 1000:>9.2f} ms")
    parts = sum(s for label, s in split.items() if not label.startswith("- "))
    print(f"    {'other (lease, SQL)':<18}{(1 - parts / whole) * 100:>6.1f} %")
    print(f"naive GetMetricStatistics: {naive_calls} calls for {regions[0]} in {naive_s:.1f} s; "
          f"{naive_total} calls for the fleet (about {naive_s * naive_total / naive_calls:.0f} s "
          f"at that rate, one call at a time) vs {api_calls}")  # fmt: skip
    if args.json:
        print(json.dumps({
            "filesystems": len(all_refs),
            "regions": len(regions),
            "window_minutes": args.minutes,
            "api_calls": api_calls,
            "api_calls_without_late_look": plain_calls,
            "late_look_minutes": looked,
            "late_rows": late_rows,
            "late_rows_emptied": emptied,
            "wall_without_late_look_s": round(plain_wall, 3),
            "collector_cpu_without_late_look_s": round(plain_cpu, 3),
            "min_api_calls": min_api_calls,
            "api_calls_per_region": counts["calls"],
            "throttled": sum(counts["throttled"].values()),
            "metrics_requested": metrics_requested,
            "yace_metrics_requested": yace,
            "wall_s": round(wall, 3),
            "first_cycle_wall_s": round(first_wall, 3),
            "collector_cpu_s": round(cpu_s, 3),
            "load_average": round(load, 2),
            "peak_rss_mb": round(max(peak_self, peak_children), 1),
            "rows_saved": rows,
            "naive_statistics_calls": naive_total,
            "naive_statistics_s_per_region": round(naive_s, 2),
            "workers": args.workers,
            "cpus": os.cpu_count(),
            "ceil_check": all(
                counts["calls"].get(c, 0) == math.ceil(queries[c] / 500) for c in regions
            ) if not args.throttle_every else None,
        }))  # fmt: skip


if __name__ == "__main__":
    main()

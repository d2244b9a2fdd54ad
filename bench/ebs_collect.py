"""One EBS collection cycle for a fleet of volumes against a stand-in that enforces
CloudWatch's GetMetricData limits: the calls it made against the floor, and its time.

    python bench/ebs_collect.py [--volumes 1000] [--per-instance 5] [--regions 1]
                                [--minutes 5] [--database-url URL] [--json]

The stand-in runs in its own process (a moto server on loopback with ``apps.ebs.demo_cloudwatch``'s
responder: at most 500 queries and 100,800 data points a call, NextToken beyond), so it does
not share the collector's interpreter; boto3 talks to it over HTTP. The volumes (gp2, gp3,
io1, st1, sc1 profiles of ``apps.ebs.demo_workloads``, ``--per-instance`` to an m5.large) are created in
it with boto3 and discovered with the product's discovery. Then the real task runs once per
account-region, twice: the first cycle (the first look-back, ``VIGIL_EBS_FORECAST_HOURS``)
and a steady one over the last ``--minutes``. Each prints its GetMetricData calls (as the
collector counted them and as the stand-in did) against the floor, ceil(queries / 500) per
window piece (``cloudwatch_plan.floor_calls``), its wall time and where it went. Uses a
temporary SQLite database unless ``--database-url`` is given (an empty database). ``make
test`` runs it with ``--volumes 5`` (tests/ebs/test_bench.py).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.environment import parse_args  # noqa: E402

#: ``--tiny``: five volumes on one instance (and its root volume), one region.
TINY = {"volumes": 5}

REGIONS = ["us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-1"]
PROFILES = ["gp2-steady", "gp2-draining", "gp2-idle", "gp3-quiet", "gp3-at-limit", "io1-busy",
            "st1-baseline", "sc1-cold"]  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(port: int, control_port: int) -> None:
    """The moto server with the EBS responder, and a control port for its call counts."""
    # apps' modules once main() has set Django up (django.setup())
    import logging
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from moto.server import ThreadedMotoServer

    from apps.ebs import demo_cloudwatch

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    responder = demo_cloudwatch.install(demo_cloudwatch.EbsResponder())
    ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False).start()

    class Control(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            usage = resource.getrusage(resource.RUSAGE_SELF)
            cpu = usage.ru_utime + usage.ru_stime
            body = json.dumps({"calls": dict(responder.calls), "cpu_s": cpu}).encode()
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


def create_fleet(url: str, code: str, volumes: int, per_instance: int) -> None:
    """``volumes`` tagged volumes, ``per_instance`` to an instance (and its root volume)."""
    # apps' modules once main() has set Django up (django.setup())
    import boto3

    from apps.ebs.demo_cloudwatch import PHASE_TAG, PROFILE_TAG
    from apps.ebs.demo_workloads import PROFILES as FLEET

    ec2 = boto3.client("ec2", region_name=code, endpoint_url=url)

    def tags(kind: str, name: str, profile: str, phase: int = 0) -> list[dict]:
        values = {"Name": name, PROFILE_TAG: profile, PHASE_TAG: str(phase)}
        return [{"ResourceType": kind, "Tags": [{"Key": k, "Value": v} for k, v in values.items()]}]

    def one_instance(i: int) -> None:
        instance = ec2.run_instances(
            ImageId="ami-12c6146b", MinCount=1, MaxCount=1, InstanceType="m5.large",
            TagSpecifications=tags("instance", f"bench-{i:04d}", "steady"),
        )["Instances"][0]["InstanceId"]  # fmt: skip
        for root in ec2.describe_volumes(
            Filters=[{"Name": "attachment.instance-id", "Values": [instance]}]
        )["Volumes"]:
            ec2.create_tags(
                Resources=[root["VolumeId"]], Tags=tags("volume", "root", "gp2-idle")[0]["Tags"]
            )
        for j in range(min(per_instance, volumes - i * per_instance)):
            n = i * per_instance + j
            p = FLEET[PROFILES[n % len(PROFILES)]]
            extra = {"Iops": p.iops} if p.iops and p.volume_type != "gp2" else {}
            volume = ec2.create_volume(
                AvailabilityZone=f"{code}a", Size=p.size_gib, VolumeType=p.volume_type,
                TagSpecifications=tags("volume", f"bench-{n:05d}", p.key, (n * 37) % 900),
                **extra,
            )["VolumeId"]  # fmt: skip
            ec2.attach_volume(
                VolumeId=volume, InstanceId=instance, Device=f"/dev/sd{'fghijklmnop'[j]}"
            )

    instances = -(-volumes // per_instance)
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(one_instance, range(instances)))


def run(args: argparse.Namespace, url: str, control_port: int) -> dict:
    import django

    django.setup()
    # apps' modules once main() has set Django up (django.setup())
    from django.core.management import call_command
    from django.utils import timezone

    from apps.ebs import collect
    from apps.ebs.cloudwatch_plan import WINDOW_STEP_S
    from apps.ebs.models import RegionCollection, Volume, VolumeMinute
    from apps.lib.cloudwatch import align
    from apps.regions.models import Account, Region

    call_command("migrate", interactive=False, verbosity=0)
    regions = REGIONS[: args.regions]
    t = time.perf_counter()
    for code in regions:
        create_fleet(url, code, args.volumes // len(regions), args.per_instance)
    created_s = time.perf_counter() - t
    account = Account.objects.create(name="Bench account")
    collections = []
    now = timezone.now()
    t = time.perf_counter()
    for code in regions:
        region = Region.objects.create(
            account=account, code=code, opt_in_status="opt-in-not-required"
        )
        rc = RegionCollection.objects.create(region=region, next_discovery=now + timedelta(hours=1))
        collect.discover(rc, now)
        collections.append(rc.pk)
    discovery_s = time.perf_counter() - t

    def cycle(title: str) -> dict:
        control(control_port, "POST")
        standin_cpu = control(control_port)["cpu_s"]
        started = time.perf_counter()
        cpu = time.process_time()
        results = [collect.run_cycle(pk, timezone.now()) for pk in collections]
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu
        after = control(control_port)
        standin_calls = sum(after["calls"].values())
        split: dict[str, float] = {}
        for r in results:
            for part, spent in r["seconds"].items():
                split[part] = split.get(part, 0.0) + spent["wall"]
        return {
            "cycle": title,
            "queries": sum(r["queries"] for r in results),
            "calls": sum(r["api_calls"] for r in results),
            "standin_calls": standin_calls,
            "floor": sum(r["floor_calls"] for r in results),
            "rows": sum(r["rows"] for r in results),
            "wall_s": round(wall, 3),
            "collector_cpu_s": round(cpu, 3),
            "standin_cpu_s": round(after["cpu_s"] - standin_cpu, 3),
            "load_average": round(os.getloadavg()[0], 2),
            "split_s": {k: round(v, 3) for k, v in split.items()},
            "statuses": {
                s: sum(r["statuses"].get(s, 0) for r in results)
                for s in ("ok", "warning", "critical", "unknown")
            },
        }

    first = cycle("first (look-back)")
    start = align(timezone.now() - timedelta(minutes=3), WINDOW_STEP_S) - timedelta(
        minutes=args.minutes
    )
    Volume.objects.update(collected_until=start)
    VolumeMinute.objects.filter(ts__gte=start).delete()
    steady = cycle(f"steady (last {args.minutes} min)")
    return {
        "volumes": Volume.objects.filter(deleted__isnull=True).count(),
        "attached": Volume.objects.filter(instance__isnull=False).count(),
        "regions": len(regions),
        "create_s": round(created_s, 2),
        "discovery_s": round(discovery_s, 2),
        "cycles": [first, steady],
    }


def report(figures: dict) -> None:
    print(
        f"{figures['volumes']} volumes ({figures['attached']} attached, roots included) in "
        f"{figures['regions']} region(s); fleet created in {figures['create_s']} s, "
        f"discovered in {figures['discovery_s']} s"
    )
    for c in figures["cycles"]:
        at_floor = "at the floor" if c["calls"] == c["floor"] else "ABOVE the floor"
        print(
            f"{c['cycle']}: {c['queries']} queries, {c['calls']} GetMetricData calls "
            f"(stand-in counted {c['standin_calls']}) against a floor of {c['floor']} "
            f"({at_floor}); {c['rows']} rows; wall {c['wall_s']:.2f} s, collector CPU "
            f"{c['collector_cpu_s']:.2f} s, stand-in CPU {c['standin_cpu_s']:.2f} s, load average "
            f"{c['load_average']:.1f}"
        )
        parts = ", ".join(f"{k} {v:.2f} s" for k, v in c["split_s"].items())
        print(f"    {parts}; statuses {c['statuses']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--volumes", type=int, default=1000)
    parser.add_argument("--per-instance", type=int, default=5)
    parser.add_argument("--regions", type=int, default=1)
    parser.add_argument("--minutes", type=int, default=5, help="the steady cycle's window")
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
            "CELERY_BROKER_URL": "memory://",
            "LOG_LEVEL": "WARNING",
        }
    )
    if args.serve:
        import django

        django.setup()
        serve(*args.serve)
        return
    work = Path(tempfile.mkdtemp(prefix="vigil-bench-ebs-"))
    os.environ["DATABASE_URL"] = args.database_url or f"sqlite:///{work / 'bench.sqlite3'}"
    port, control_port = free_port(), free_port()
    url = f"http://127.0.0.1:{port}"
    os.environ["AWS_ENDPOINT_URL"] = url
    standin = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), str(control_port)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert standin.stdout is not None and standin.stdout.readline().strip() == "READY"
        figures = run(args, url, control_port)
    finally:
        standin.terminate()
        standin.wait(10)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        report(figures)


if __name__ == "__main__":
    main()

"""Alert latency and storm damping with a real Celery worker, Redis and SES (moto) on loopback.

    python bench/alerts.py [--transitions 1000] [--storm-subjects 50] [--json]

Measures, over N status changes written at a steady pace across 10 regions, the time from the
transition being written to SES accepting the email that carries it (Notification.sent), as
p50/p95; then counts the emails sent for a storm of M subjects of one region flipping between
critical and ok ten times each. Starts its own redis-server, moto server and worker; uses a
temporary SQLite database unless --database-url is given.
"""

from __future__ import annotations

import argparse
import email
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.alerts.workers import RedisServer, wait_for  # noqa: E402  (after the path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transitions", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=50.0, help="transitions per second")
    parser.add_argument("--storm-subjects", type=int, default=50)
    parser.add_argument("--storm-flips", type=int, default=10)
    parser.add_argument("--database-url", default="")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="vigil-bench-alerts-"))
    redis = RedisServer(work)
    redis.start()
    from moto.server import ThreadedMotoServer

    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "VIGIL_"))},
        "DJANGO_SETTINGS_MODULE": "bench.alerts_settings",
        "DATABASE_URL": args.database_url or f"sqlite:///{work / 'bench.sqlite3'}",
        "CELERY_BROKER_URL": redis.url,
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "EMAIL_BACKEND": "anymail.backends.amazon_ses.EmailBackend",
        "DEFAULT_FROM_EMAIL": "vigil@example.com",
        "VIGIL_DEMO": "false",
    }
    os.environ.update(env)
    worker = None
    try:
        import django

        django.setup()
        import boto3
        from django.core.management import call_command

        call_command("migrate", verbosity=0, interactive=False)
        boto3.client("sesv2", "us-east-1", endpoint_url=endpoint).create_email_identity(
            EmailIdentity="vigil@example.com"
        )
        log = work / "worker.log"
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "-Q",
                "alerts,default",
                "-c",
                "2",
                "-l",
                "WARNING",
                "--without-gossip",
                "--without-mingle",
            ],
            cwd=ROOT,
            env=env,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        wait_for(lambda: _redis_has_consumer(redis.port), 60, "the worker")
        latency = measure_latency(args.transitions, args.rate)
        storm_subjects = storm(args.storm_subjects, args.storm_flips, endpoint)
        storm_emails = len(storm_subjects)
    finally:
        if worker and worker.poll() is None:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(30)
        moto.stop()
        redis.stop()
        shutil.rmtree(work, ignore_errors=True)

    result = {
        "transitions": args.transitions,
        "p50_s": round(statistics.median(latency), 3),
        "p95_s": round(statistics.quantiles(latency, n=20)[18], 3),
        "max_s": round(max(latency), 3),
        "storm_subjects": args.storm_subjects,
        "storm_transitions": args.storm_subjects * args.storm_flips,
        "storm_emails": storm_emails,
        "database": "postgresql" if args.database_url.startswith("postgres") else "sqlite",
        "cores": os.cpu_count(),
    }
    print(f"transitions: {result['transitions']} at {args.rate:g}/s over 10 regions")
    print(
        f"status change -> SES accepted: p50 {result['p50_s']} s, p95 {result['p95_s']} s, "
        f"max {result['max_s']} s"
    )
    print(
        f"flapping storm: {result['storm_subjects']} subjects x {args.storm_flips} changes = "
        f"{result['storm_transitions']} transitions -> {storm_emails} emails"
    )
    for line in storm_subjects:
        print(f"  {line[:110]}")
    if args.json:
        print(json.dumps(result))


def _redis_has_consumer(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"CLIENT LIST\r\n")
            time.sleep(0.1)
            return s.recv(65536).count(b"cmd=") >= 3  # ourselves plus the worker's connections
    except OSError:
        return False


def _gadgets(region_code: str, n: int, prefix: str):
    from apps.regions.models import Region
    from tests.concern_app.models import Gadget

    region, _ = Region.objects.get_or_create(
        kind="site", code=region_code, defaults={"name": region_code}
    )
    return Gadget.objects.bulk_create(Gadget(region=region, name=f"{prefix}{i}") for i in range(n))


def _route_everything() -> None:
    from apps.alerts.models import Channel, Rule

    channel, _ = Channel.objects.get_or_create(
        name="bench", defaults={"target": "oncall@example.com"}
    )
    Rule.objects.get(is_default=True).channels.add(channel)


def measure_latency(count: int, rate: float) -> list[float]:
    from apps import alerts
    from apps.alerts.models import Notification
    from apps.lib.status import Status, Verdict

    _route_everything()
    subjects = []
    for r in range(10):
        subjects += _gadgets(f"bench-{r}", count // 10, "fs")
    started = time.monotonic()
    for i, subject in enumerate(subjects):
        alerts.record(subject, Verdict(Status.CRITICAL, f"bench change {i}"))
        pause = started + (i + 1) / rate - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    wait_for(lambda: not Notification.objects.exclude(state="sent").exists(), 300, "delivery", 0.5)
    return [
        (n.sent - n.transition.created).total_seconds()
        for n in Notification.objects.select_related("transition")
    ]


def storm(subjects: int, flips: int, endpoint: str) -> list[str]:
    """The subject lines of the emails a storm of flapping subjects sent."""
    from apps import alerts
    from apps.alerts.models import Notification
    from apps.lib.status import Status, Verdict

    before = len(_emails(endpoint))
    gadgets = _gadgets("storm", subjects, "flappy")
    started = time.monotonic()
    for k in range(flips):
        verdict = Verdict(Status.CRITICAL if k % 2 == 0 else Status.OK, f"storm {k}")
        for gadget in gadgets:
            alerts.record(gadget, verdict)
    print(f"storm written in {time.monotonic() - started:.1f} s", file=sys.stderr)
    wait_for(
        lambda: not Notification.objects.filter(state="pending").exists(),
        300,
        "storm delivery",
        0.5,
    )
    return [_subject(raw) for raw in _emails(endpoint)[before:]]


def _emails(endpoint: str) -> list[str]:
    with urllib.request.urlopen(f"{endpoint}/moto-api/data.json", timeout=30) as response:
        return [m["raw_data"] for m in json.load(response)["ses"]["RawMessage"]]


def _subject(raw: str) -> str:
    return " ".join(str(email.message_from_string(raw)["Subject"]).split())


if __name__ == "__main__":
    main()

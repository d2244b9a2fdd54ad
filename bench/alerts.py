"""Alert latency and storm damping with a real Celery worker, Redis and SES (moto) on loopback.

    python bench/alerts.py [--transitions 1000] [--storm-subjects 50] [--json] [--tiny]

Measures, over N status changes written at a steady pace across 10 regions, the time from the
transition being written to SES accepting the email that carries it (Notification.sent), as
p50/p95; then counts the emails sent for a storm of M subjects of one region flipping between
critical and ok ten times each. Then, with Celery beat running its real schedule (the outbox
sweep every VIGIL_ALERT_SWEEP_SECONDS, 30 s):

- ``silence_end_s``: 100 subjects, each under a silence of its own ending at a different moment
  over 90 s (from 20 s after they are made: ``--silence-lead``, ``--silence-spread``), start
  failing during it; from each silence's end to SES accepting the email about it (p95; goal
  <= 60 s);
- ``webhook_p95_s``: status changes routed to a webhook channel, from the change to the
  request reaching a loopback receiver (p95; goal <= 2 s);
- ``server_storm_*``: one storage server gone under ``--server-hosts`` RAID hosts of the demo's
  layout (RAID-0 over five RAID-10s on three storage servers, the reports stored as a push
  stores them): every host's six arrays change at once and share one incident by cause; the
  webhook messages and PagerDuty-style events each storm sent (goal: 1 and 1), and the time
  from the first report to the first message (p95 over ``--server-storms`` storms, each
  followed by the recovery).

Starts its own redis-server, worker and beat, and a moto server unless --aws-url names one;
uses a temporary SQLite database unless --database-url is given (migrated here). ``--tiny``
runs every part at a few subjects, in about half a minute.
"""

from __future__ import annotations

import argparse
import email
import json
import os
import shutil
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

from bench.environment import parse_args  # noqa: E402
from tests.services import wait_for  # noqa: E402
from tests.services.workers import Beat, RedisServer, stop_group  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transitions", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=50.0, help="transitions per second")
    parser.add_argument("--storm-subjects", type=int, default=50)
    parser.add_argument("--storm-flips", type=int, default=10)
    parser.add_argument("--silenced-subjects", type=int, default=100)
    parser.add_argument(
        "--silence-lead", type=float, default=20.0, help="s until the first silence ends"
    )
    parser.add_argument(
        "--silence-spread", type=float, default=90.0, help="s over which the silences end"
    )
    parser.add_argument("--webhook-changes", type=int, default=200)
    parser.add_argument("--server-hosts", type=int, default=20)
    parser.add_argument("--server-storms", type=int, default=5)
    parser.add_argument(
        "--repeat-hold",
        type=float,
        default=None,
        help="VIGIL_ALERT_REPEAT_HOLD_SECONDS (the storm's wait between emails; default 30)",
    )
    parser.add_argument("--database-url", default="")
    parser.add_argument("--aws-url", default="", help="a moto server to use (else one of its own)")
    parser.add_argument("--json", action="store_true")
    args = parse_args(parser, TINY)

    work = Path(tempfile.mkdtemp(prefix="vigil-bench-alerts-"))
    redis = RedisServer(work)
    redis.start()
    moto = None
    endpoint = args.aws_url.rstrip("/")
    if not endpoint:
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
        "EMAIL_BACKEND": "apps.alerts.integrations.email.ses.EmailBackend",
        "DEFAULT_FROM_EMAIL": "vigil@example.com",
        "VIGIL_DEMO": "false",
        "VIGIL_OUTBOUND_ALLOW_LOOPBACK": "true",  # the webhook receiver is on loopback
    }
    if args.repeat_hold is not None:
        env["VIGIL_ALERT_REPEAT_HOLD_SECONDS"] = str(args.repeat_hold)
    os.environ.update(env)
    worker = beat = None
    try:
        import django

        django.setup()
        # apps' modules once main() has set Django up (django.setup())
        import boto3
        from django.core.management import call_command

        from config.celery_app import command as celery_command

        call_command("migrate", verbosity=0, interactive=False)
        boto3.client("sesv2", "us-east-1", endpoint_url=endpoint).create_email_identity(
            EmailIdentity="vigil@example.com"
        )
        log = work / "worker.log"
        options = ["-Q", "alerts,default", "-c", "2", "-l", "WARNING"]
        worker = subprocess.Popen(
            celery_command("worker", *options, "--without-gossip", "--without-mingle"),
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
        beat = Beat(env, work)
        beat.start()
        silence_end = measure_silence_end(
            args.silenced_subjects, args.silence_lead, args.silence_spread
        )
        webhook = measure_webhook(args.webhook_changes)
        server = measure_server_storm(args.server_hosts, args.server_storms)
    finally:
        if beat:
            beat.stop()
        stop_group(worker, grace_s=30)
        if moto:
            moto.stop()
        redis.stop()
        shutil.rmtree(work, ignore_errors=True)

    result = {
        "transitions": args.transitions,
        "p50_s": round(statistics.median(latency), 3),
        "p95_s": p95(latency),
        "max_s": round(max(latency), 3),
        "storm_subjects": args.storm_subjects,
        "storm_transitions": args.storm_subjects * args.storm_flips,
        "storm_emails": storm_emails,
        "silenced_subjects": len(silence_end),
        "silence_end_p50_s": round(statistics.median(silence_end), 3),
        "silence_end_s": p95(silence_end),
        "silence_end_max_s": round(max(silence_end), 3),
        "webhook_changes": len(webhook),
        "webhook_p50_s": round(statistics.median(webhook), 3),
        "webhook_p95_s": p95(webhook),
        "server_hosts": args.server_hosts,
        "server_storm_transitions": server["transitions"],
        "server_storm_messages": server["messages"],
        "server_storm_pagerduty_events": server["events"],
        "server_storm_first_p50_s": round(statistics.median(server["first"]), 3),
        "server_storm_first_p95_s": p95(server["first"]),
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
    print(
        f"silence end -> SES accepted the email about a subject still failing: "
        f"p50 {result['silence_end_p50_s']} s, p95 {result['silence_end_s']} s, "
        f"max {result['silence_end_max_s']} s "
        f"over {result['silenced_subjects']} subjects ending over {args.silence_spread:g} s "
        "(goal <= 60 s)"
    )
    print(
        f"status change -> webhook receiver: p50 {result['webhook_p50_s']} s, "
        f"p95 {result['webhook_p95_s']} s over {result['webhook_changes']} changes (goal <= 2 s)"
    )
    print(
        f"storage server storm: {args.server_hosts} hosts x 6 arrays = "
        f"{result['server_storm_transitions']} transitions -> "
        f"{result['server_storm_messages']} webhook messages and "
        f"{result['server_storm_pagerduty_events']} PagerDuty events per storm; "
        f"to the first: p50 {result['server_storm_first_p50_s']} s, "
        f"p95 {result['server_storm_first_p95_s']} s over {args.server_storms} storms"
    )
    if args.json:
        print(json.dumps(result))


#: ``--tiny``: every part at a few subjects (tests/test_bench.py runs it).
TINY = {
    "transitions": 20,
    "storm_subjects": 3,
    "storm_flips": 4,
    "silenced_subjects": 10,
    "silence_lead": 3.0,
    "silence_spread": 2.0,
    "webhook_changes": 10,
    "repeat_hold": 2.0,
    "server_hosts": 2,
    "server_storms": 2,
}


def p95(values: list[float]) -> float:
    """The 95th percentile, within the values (a few values cannot extrapolate past the max)."""
    return round(statistics.quantiles(values, n=20, method="inclusive")[18], 3)


def _redis_has_consumer(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"CLIENT LIST\r\n")
            time.sleep(0.1)
            return s.recv(65536).count(b"cmd=") >= 3  # ourselves plus the worker's connections
    except OSError:
        return False


def _gadgets(region_code: str, n: int, prefix: str):
    # apps' modules once main() has set Django up (django.setup())
    from apps.regions.models import Region
    from tests.concern_app.models import Gadget

    region, _ = Region.objects.get_or_create(
        kind="site", code=region_code, defaults={"name": region_code}
    )
    return Gadget.objects.bulk_create(Gadget(region=region, name=f"{prefix}{i}") for i in range(n))


def _route_everything() -> None:
    # apps' modules once main() has set Django up (django.setup())
    from apps.alerts.models import Channel, Rule

    channel, _ = Channel.objects.get_or_create(
        name="bench", defaults={"target": "oncall@example.com"}
    )
    Rule.objects.get(is_default=True).channels.add(channel)


def measure_latency(count: int, rate: float) -> list[float]:
    # apps' modules once main() has set Django up (django.setup())
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
    wait_for(
        lambda: not Notification.objects.exclude(state="sent").exists(),
        300,
        "delivery",
        interval=0.5,
    )
    return [
        (n.sent - n.transition.created).total_seconds()
        for n in Notification.objects.select_related("transition")
    ]


def storm(subjects: int, flips: int, endpoint: str) -> list[str]:
    """The subject lines of the emails a storm of flapping subjects sent."""
    # apps' modules once main() has set Django up (django.setup())
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
        interval=0.5,
    )
    return [_subject(raw) for raw in _emails(endpoint)[before:]]


def measure_silence_end(subjects: int, lead_s: float, spread_s: float) -> list[float]:
    """Each subject under its own silence, the first ending ``lead_s`` from now and the rest
    over ``spread_s``; end -> email accepted by SES."""
    # apps' modules once main() has set Django up (django.setup())
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from apps import alerts
    from apps.alerts.models import Notification, Silence
    from apps.lib.status import Status, Verdict

    author, _ = get_user_model().objects.get_or_create(username="bench")
    gadgets = []
    for r in range(10):
        gadgets += _gadgets(f"quiet-{r}", subjects // 10, "held")
    first_end = timezone.now() + timedelta(seconds=lead_s)
    spread = spread_s / max(len(gadgets) - 1, 1)
    silences = {}
    for i, gadget in enumerate(gadgets):
        silences[gadget.pk] = Silence.objects.create(
            region=gadget.region,
            content_type_id=_content_type_id(gadget),
            object_id=gadget.pk,
            ends=first_end + timedelta(seconds=i * spread),
            author=author,
        )
        alerts.record(gadget, Verdict(Status.CRITICAL, "failing under a silence"))
    assert Notification.objects.filter(state="silenced", transition__object_id__in=silences)
    last_end = max(s.ends for s in silences.values())
    wait_s = (last_end - timezone.now()).total_seconds() + 120
    released = Notification.objects.filter(
        transition__object_id__in=list(silences), transition__region__code__startswith="quiet-"
    )
    wait_for(
        lambda: not released.exclude(state="sent").exists(),
        wait_s,
        "released emails",
        interval=0.5,
    )
    return [
        (n.sent - silences[n.transition.object_id].ends).total_seconds()
        for n in released.select_related("transition")
    ]


def _content_type_id(model) -> int:
    from django.contrib.contenttypes.models import ContentType

    return ContentType.objects.get_for_model(type(model)).pk


def measure_webhook(count: int, rate: float = 20.0) -> list[float]:
    """Status changes routed to a webhook: change written -> request at the receiver."""
    # apps' modules once main() has set Django up (django.setup())
    from apps import alerts
    from apps.alerts.models import Channel, Rule
    from apps.lib.status import Status, Verdict
    from apps.regions.models import Region
    from tests.services.receiver import Receiver

    receiver = Receiver()
    try:
        hook = Channel.objects.create(
            name="bench hook", kind="webhook", target=receiver.url, secret="bench-secret-0123456789"
        )
        gadgets = []
        for r in range(10):
            gadgets += _gadgets(f"hook-{r}", count // 10, "hooked")
            rule = Rule.objects.create(
                name=f"hook-{r}", region=Region.objects.get(code=f"hook-{r}")
            )
            rule.channels.add(hook)
        written: dict[int, float] = {}  # transition id -> time.time() when written
        started = time.monotonic()
        for i, gadget in enumerate(gadgets):
            transition = alerts.record(gadget, Verdict(Status.CRITICAL, f"hook change {i}"))
            written[transition.pk] = transition.created.timestamp()
            pause = started + (i + 1) / rate - time.monotonic()
            if pause > 0:
                time.sleep(pause)

        def arrived() -> dict[int, float]:
            seen: dict[int, float] = {}
            offset = time.time() - time.monotonic()
            for request in list(receiver.requests):
                for event in request.json["events"]:
                    seen.setdefault(event["transition_id"], request.at + offset)
            return seen

        wait_for(lambda: len(arrived()) >= len(written), 120, "webhook deliveries", interval=0.5)
        seen = arrived()
        return [seen[pk] - created for pk, created in written.items()]
    finally:
        receiver.close()


def measure_server_storm(hosts: int, storms: int) -> dict:
    """One storage server gone under ``hosts`` RAID hosts, ``storms`` times (each followed by
    its recovery): per storm, the webhook messages and PagerDuty events sent (the most of any
    storm) and the seconds from the first report to the first message."""
    # apps' modules once main() has set Django up (django.setup())
    from apps.alerts.models import Channel, Notification, Rule
    from apps.raid.collect import ingest
    from apps.raid.demo import SEED_ARRAYS, SEED_RULES, seed_layout_mdstat
    from apps.raid.models import Host
    from apps.regions.models import Region
    from tests.services.receiver import Receiver

    failed = [disks[1] for disks in SEED_ARRAYS.values()]  # storage-b's five disks
    hook, pager = Receiver(), Receiver(accepted=202)
    try:
        region, _ = Region.objects.get_or_create(
            kind="site", code="storage", defaults={"name": "storage"}
        )
        rule = Rule.objects.create(name="storage", region=region)
        rule.channels.add(
            Channel.objects.create(
                name="storm hook", kind="webhook", target=hook.url,
                secret="bench-secret-0123456789",
            ),
            Channel.objects.create(
                name="storm pager", kind="pagerduty", target=pager.url,
                secret="Benchroutingkey0123456789abcdefA",
            ),
        )  # fmt: skip
        clients = [
            Host.objects.create(
                name=f"client-{i}",
                region=region,
                domain_rules=dict(SEED_RULES),
                domain_noun="storage server",
            )  # fmt: skip
            for i in range(hosts)
        ]
        healthy, broken = seed_layout_mdstat(), seed_layout_mdstat(failed=failed)
        for host in clients:
            ingest(host, healthy)
        first: list[float] = []
        messages = events = transitions = 0
        offset = time.time() - time.monotonic()

        def settled() -> bool:
            return not Notification.objects.filter(state="pending").exists()

        for _ in range(storms):
            hooks_before, pages_before = len(hook.requests), len(pager.requests)
            started = time.time()
            for host in clients:
                transitions += len(ingest(host, broken))
            wait_for(
                lambda n=hooks_before: len(hook.requests) > n, 120, "the storm's first message"
            )
            wait_for(settled, 120, "the storm's messages", interval=0.5)
            time.sleep(2)  # anything held for a repeat would be due by now
            wait_for(settled, 120, "the storm's messages", interval=0.5)
            first.append(hook.requests[hooks_before].at + offset - started)
            messages = max(messages, len(hook.requests) - hooks_before)
            events = max(events, len(pager.requests) - pages_before)
            recovered = len(pager.requests)
            for host in clients:
                ingest(host, healthy)
            wait_for(lambda n=recovered: len(pager.requests) > n, 120, "the recovery")
            wait_for(settled, 120, "the recovery's messages", interval=0.5)
        return {
            "transitions": transitions // max(storms, 1),
            "messages": messages,
            "events": events,
            "first": first,
        }
    finally:
        hook.close()
        pager.close()


def _emails(endpoint: str) -> list[str]:
    with urllib.request.urlopen(f"{endpoint}/moto-api/data.json", timeout=30) as response:
        return [m["raw_data"] for m in json.load(response)["ses"]["RawMessage"]]


def _subject(raw: str) -> str:
    return " ".join(str(email.message_from_string(raw)["Subject"]).split())


if __name__ == "__main__":
    main()

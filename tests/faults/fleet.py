"""A small EFS fleet on the stand-in, the cycles the tests drive, and the checks every fault
scenario ends with: nothing lost, nothing sent twice, statuses back to the truth.

A real outage lasts minutes and a test seconds. ``outage(minutes)`` gives the database the
state an outage of that length leaves behind: nothing collected since ``minutes`` ago
(rows after that deleted, ``collected_until`` moved back), as if no cycle had run since.
"""

from __future__ import annotations

import email
import json
import urllib.request
from datetime import datetime, timedelta

import boto3
from celery import Celery
from django.contrib.contenttypes.models import ContentType
from django.utils import timezone

from apps.alerts import routing
from apps.alerts.models import Channel, Notification, Rule, Transition
from apps.efs import collect, history
from apps.efs.demo_cloudwatch import PHASE_TAG, PROFILE_TAG
from apps.efs.demo_workloads import PROFILES, minute_values
from apps.efs.models import FileSystem, MetricMinute, RegionCollection
from apps.lib.cloudwatch import align
from apps.regions.models import Account, Region
from tests.services import wait_for

#: One file system heading for credit exhaustion, one idle, one with few credits.
FLEET = (("builds", "draining", 700), ("assets", "web-assets", 0), ("scratch", "scratch", 600))
#: Fields compared with what the stand-in serves, minute by minute.
CHECKED = ("burst_credit_balance", "metered_bytes", "data_read_count", "permitted_throughput")


def create_fleet(aws_url: str) -> list[str]:
    """The FLEET in moto (us-east-1), tagged so the stand-in serves their metrics."""
    efs = boto3.client("efs", "us-east-1", endpoint_url=aws_url)
    return [
        efs.create_file_system(
            CreationToken=f"faults-{name}",
            Tags=[
                {"Key": "Name", "Value": name},
                {"Key": PROFILE_TAG, "Value": profile},
                {"Key": PHASE_TAG, "Value": str(phase)},
            ],
        )["FileSystemId"]
        for name, profile, phase in FLEET
    ]


def create_region() -> RegionCollection:
    """An account and region to collect, and an on-call channel on the default rule."""
    account = Account.objects.create(name="Fault account")
    region = Region.objects.create(
        account=account, code="us-east-1", opt_in_status="opt-in-not-required"
    )
    channel = Channel.objects.create(name="On call", target="oncall@example.com")
    rule, _ = Rule.objects.get_or_create(is_default=True, defaults={"name": "Default"})
    rule.channels.add(channel)
    return RegionCollection.objects.create(region=region)


def collect_task(broker: Celery, rc: RegionCollection) -> None:
    """Queue one collection cycle of the region, as the beat tick's dispatch does."""
    broker.send_task(
        "apps.efs.tasks.collect_region",
        args=[rc.pk],
        kwargs={"region": "us-east-1"},
        queue="efs",
    )


def sweep(broker: Celery) -> None:
    broker.send_task("apps.alerts.tasks.sweep", queue="alerts")


def last_run(rc: RegionCollection) -> datetime | None:
    """When the region's last cycle ended, successful or not."""
    rc.refresh_from_db()
    return max(filter(None, (rc.last_success, rc.last_error_at)), default=None)


def run_cycle(broker: Celery, rc: RegionCollection, timeout: float = 60) -> RegionCollection:
    """Queue a cycle and wait until it has ended: outcome saved, verdicts written, lease
    given back."""
    before = last_run(rc)
    collect_task(broker, rc)
    wait_for(
        lambda: last_run(rc) != before and rc.lease_until is None,
        timeout,
        "the collection cycle to finish",
    )
    rc.refresh_from_db()
    return rc


def deliver_all(broker: Celery, timeout: float = 60) -> None:
    """Wake the worker as beat's sweep would until the outbox is empty."""

    def delivered() -> bool:
        sweep(broker)
        return not Notification.objects.filter(state=Notification.State.PENDING).exists()

    wait_for(delivered, timeout, "every notification to be sent", interval=1.0)


def outage(minutes: int) -> datetime:
    """The state ``minutes`` of collecting nothing leave: see the module docstring."""
    cut = align(timezone.now() - timedelta(minutes=minutes))
    MetricMinute.objects.filter(ts__gte=cut).delete()
    FileSystem.objects.update(collected_until=cut)
    return cut


def statuses() -> dict[str, str]:
    return dict(FileSystem.objects.values_list("name", "status"))


# --- The checks -------------------------------------------------------------------------------


def assert_rows_are_the_truth(start: datetime, end: datetime) -> None:
    """Every minute of [start, end) is stored, with the values CloudWatch (the stand-in) has:
    nothing missing, nothing invented, no zeros for missing data."""
    minutes = int((end - start).total_seconds() // 60)
    assert minutes > 0
    for fs in FileSystem.objects.all():
        profile_key, phase = fs.tags[PROFILE_TAG], int(fs.tags[PHASE_TAG])
        seed = int(fs.filesystem_id[3:11], 16) % 997
        rows = {r.ts: r for r in fs.minutes.filter(ts__gte=start, ts__lt=end)}
        assert len(rows) == minutes, f"{fs.name}: {len(rows)} of {minutes} minutes stored"
        for ts, row in rows.items():
            truth = minute_values(PROFILES[profile_key], seed, int(ts.timestamp()) // 60, phase)
            for field in CHECKED:
                expected, got = truth.get(field), getattr(row, field)
                assert (expected is None) == (got is None), (fs.name, ts, field)
                if expected is not None:
                    assert abs(got - expected) <= 1e-6 * max(1.0, abs(expected)), (fs.name, ts)


def assert_statuses_are_the_truth(rc: RegionCollection) -> None:
    """Each status is the verdict on the stored (true) minutes at the region's last judgement."""
    rc.refresh_from_db()
    now = rc.last_success
    th = collect.thresholds()
    for fs in FileSystem.objects.all():
        span = max(th.forecast_window, th.stale_after)
        samples = history.load_samples([fs.pk], now - span, now + timedelta(minutes=1))[fs.pk]
        truth = collect.judge(fs, samples, now, th, "")
        assert truth.status.value != "unknown", f"{fs.name}: no fresh data"
        assert (fs.status, fs.reason) == (truth.status.value, truth.reason), fs.name


def assert_no_transition_lost() -> None:
    """Every subject's status is the end of an unbroken chain of its transitions."""
    content_type = ContentType.objects.get_for_model(FileSystem)
    for fs in FileSystem.objects.all():
        chain = list(
            Transition.objects.filter(content_type=content_type, object_id=fs.pk).order_by(
                "created", "pk"
            )
        )
        assert chain, f"{fs.name} never had a transition"
        assert chain[0].old_status == "unknown"
        for before, after in zip(chain, chain[1:], strict=False):
            assert before.new_status == after.old_status, f"{fs.name}: a change was not recorded"
        assert chain[-1].new_status == fs.status, f"{fs.name}: status without its transition"


def routed_to(transition: Transition) -> set[int]:
    """The channels routing owes ``transition`` (apps.alerts.routing.enqueue): its rules'; for a
    recovery, those told of the trouble it ends (none for a first check that finds it ok).

    Incidents by cause (an account-region whose calls fail makes every file system of it unknown
    for one cause): a subject failing for a cause is owed only the channels not yet told of the
    cause by another of its subjects, which this checks was so; a recovery that leaves the cause
    open is owed the channels told of the subject alone, and the one that closes it every channel
    told of the cause."""
    held = set(
        transition.notifications.filter(state=Notification.State.INHIBITED).values_list(
            "channel_id", flat=True
        )
    )
    if not transition.is_recovery:
        routed = {c.pk for c in routing.channels_for(transition)}
        if held:
            assert transition.cause_id, f"{transition}: held back with no cause"
            for channel in held:  # held only where another subject of the cause was told
                assert (
                    Notification.objects.filter(
                        transition__cause_id=transition.cause_id,
                        channel_id=channel,
                        state=Notification.State.SENT,
                    )
                    .exclude(transition=transition)
                    .exists()
                ), f"{transition}: held from {channel}"
        return routed - held
    earlier = Transition.objects.filter(
        content_type=transition.content_type_id, object_id=transition.object_id
    ).order_by("-created", "-pk")
    told: set[int] = set()
    for before in earlier.filter(created__lte=transition.created).exclude(pk=transition.pk):
        if before.new_status == "ok":
            break  # the trouble began after this
        if before.cause_id:
            continue  # what it sent was its cause's news: the cause's recovery ends it
        told |= set(
            before.notifications.exclude(
                state__in=[Notification.State.SILENCED, Notification.State.INHIBITED]
            ).values_list("channel_id", flat=True)
        )
    if transition.cause_id:  # it closed its cause: every channel told of any of its subjects
        told |= set(
            Notification.objects.filter(
                transition__cause_id=transition.cause_id, state=Notification.State.SENT
            )
            .exclude(transition=transition)
            .values_list("channel_id", flat=True)
        )
    return told


def assert_no_notification_lost_or_doubled(aws_url: str) -> int:
    """Every transition a rule routes has a sent notification per channel, and SES got one
    email per distinct message (none twice). Returns the number of emails."""
    for transition in Transition.objects.all():
        expected = routed_to(transition)
        sent = set(
            transition.notifications.filter(
                kind=Notification.Kind.TRANSITION, state=Notification.State.SENT
            ).values_list("channel_id", flat=True)
        )
        assert sent == expected, f"{transition}: sent to {sent}, routed to {expected}"
    ids = set(
        Notification.objects.filter(state=Notification.State.SENT).values_list(
            "message_id", flat=True
        )
    )
    raw = sent_emails(aws_url)
    assert len(raw) == len(ids), f"{len(raw)} emails for {len(ids)} distinct messages"
    return len(raw)


def sent_emails(aws_url: str) -> list[str]:
    with urllib.request.urlopen(f"{aws_url}/moto-api/data.json", timeout=10) as response:
        return [m["raw_data"] for m in json.load(response)["ses"]["RawMessage"]]


def email_subjects(aws_url: str) -> list[str]:
    return [email.message_from_string(raw)["Subject"] for raw in sent_emails(aws_url)]


def cloudwatch_calls(responder) -> int:
    return sum(responder.calls.values())


def collected_end() -> datetime:
    """Where collection has reached, the same for every file system of the fleet."""
    return FileSystem.objects.values_list("collected_until", flat=True).distinct().get()


def collected_then_unknown(
    aws_url: str, broker: Celery, cloudwatch, minutes: int = 20
) -> tuple[RegionCollection, datetime]:
    """The FLEET created, collected by the running worker and its alerts sent; then an outage of
    ``minutes`` while CloudWatch refused, and a cycle that finds every subject unknown. The
    region's collection and the outage's start."""
    create_fleet(aws_url)
    rc = create_region()
    run_cycle(broker, rc)
    deliver_all(broker)
    cut = outage(minutes)
    cloudwatch.throttling = True
    run_cycle(broker, rc)
    cloudwatch.throttling = False
    deliver_all(broker)
    assert set(statuses().values()) == {"unknown"}
    return rc, cut


def start_slow_cycle(broker: Celery, rc: RegionCollection, responder, latency_s: float = 3.0):
    """Queue a cycle whose CloudWatch answers take ``latency_s``; back once it has called."""
    responder.faults.latency_s = latency_s
    calls = cloudwatch_calls(responder)
    collect_task(broker, rc)
    wait_for(lambda: cloudwatch_calls(responder) > calls, 30, "the cycle to call CloudWatch")


def assert_converged(rc: RegionCollection, aws_url: str, since: datetime) -> None:
    """After the fault: the minutes since ``since`` stored as CloudWatch has them, statuses the
    verdict on them, and no transition or notification lost or doubled."""
    assert_rows_are_the_truth(since, collected_end())
    assert_statuses_are_the_truth(rc)
    assert_no_transition_lost()
    assert_no_notification_lost_or_doubled(aws_url)

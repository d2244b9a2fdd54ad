"""One account-region's EFS work, between the adapters and the database: discovery,
collection of a window (with back-fill progress saved as it goes) and the verdicts.

The Celery tasks (``tasks.py``) call these; each step is safe to run twice: discovery is an
upsert, minutes are upserted on (file system, minute), and a verdict only writes a
transition when the status changes (``alerts.record``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from botocore.exceptions import BotoCoreError, ClientError
from django.conf import settings
from django.db import connection, transaction

from apps import alerts
from apps.lib import aws
from apps.lib.cloudwatch import Piece, Window, collection_window
from apps.lib.cloudwatch import client as cloudwatch_client
from apps.lib.status import Cause, Status, Verdict, aws_access, jsonable
from apps.lib.stopwatch import Stopwatch
from apps.regions import thresholds as region_thresholds

from . import clients, cloudwatch, elasticfilesystem, history, pricing
from .cloudwatch_plan import Collected, Dropped, with_late_look
from .documented import value
from .elasticfilesystem import FileSystemInfo, Replica
from .models import DESCRIBED_FIELDS, FileSystem, NfsMount, RegionCollection
from .verdict import Thresholds, filesystem_verdict

log = logging.getLogger(__name__)

DISCOVERED_FIELDS = ("name", *DESCRIBED_FIELDS)


def thresholds(limits: dict | None = None) -> Thresholds:
    rpo = value(limits or pricing.limits_table(), "replication.rpo_minutes")
    return Thresholds(
        stale_after=timedelta(minutes=settings.VIGIL_EFS_STALE_MINUTES),
        forecast_window=timedelta(hours=settings.VIGIL_EFS_FORECAST_HOURS),
        replica_warning=timedelta(minutes=rpo),
        replica_critical=timedelta(minutes=settings.VIGIL_EFS_REPLICATION_CRITICAL_MINUTES),
    )


@transaction.atomic
def save_discovery(
    rc: RegionCollection,
    found: list[FileSystemInfo],
    now: datetime,
    replications: dict[str, list[Replica]] | None = None,
) -> int:
    """Upsert what ``describe_file_systems`` found; mark the vanished deleted (history kept).
    With ``replications`` (``describe_replications``; None when AWS would not say), each file
    system's replicas are set from it, keeping the latest TimeSinceLastSync of each."""
    existing = {fs.filesystem_id: fs for fs in FileSystem.objects.filter(region=rc.region)}
    for info in found:
        values = {name: getattr(info, name) for name in DISCOVERED_FIELDS}
        fs = existing.get(info.id)
        if replications is not None:
            values["replicas"] = _replicas(replications.get(info.id, []), fs)
        if fs is None:
            FileSystem.objects.create(region=rc.region, filesystem_id=info.id, **values)
        elif fs.deleted or any(getattr(fs, k) != v for k, v in values.items()):
            FileSystem.objects.filter(pk=fs.pk).update(deleted=None, **values)
    seen = {info.id for info in found}
    gone = FileSystem.objects.filter(region=rc.region, deleted__isnull=True)
    gone.exclude(filesystem_id__in=seen).update(deleted=now)
    return len(found)


def save_mount_targets(rc: RegionCollection, targets: dict[str, list[str]] | None) -> None:
    """Each file system's mount targets' addresses (kept as they were when AWS would not say)."""
    if targets is None:
        return
    for fs in FileSystem.objects.filter(region=rc.region, deleted__isnull=True):
        addresses = sorted(targets.get(fs.filesystem_id, []))
        if addresses != fs.mount_target_addresses:
            FileSystem.objects.filter(pk=fs.pk).update(mount_target_addresses=addresses)


def _replicas(found: list[Replica], fs: FileSystem | None) -> list[dict]:
    """The ``FileSystem.replicas`` entries for what discovery found, with the last
    TimeSinceLastSync reading of a destination kept from before."""
    before = {r.get("destination"): r for r in (fs.replicas if fs else None) or []}
    out = []
    for r in found:
        kept = before.get(r.destination_id) or {}
        out.append(
            {
                "destination": r.destination_id,
                "region": r.region,
                "status": r.status,
                "last_replicated": r.last_replicated.isoformat() if r.last_replicated else None,
                "sync_seconds": kept.get("sync_seconds"),
                "sync_at": kept.get("sync_at"),
            }
        )
    return out


def save_syncs(by_id: dict[str, FileSystem], syncs: dict) -> None:
    """Keep the latest TimeSinceLastSync of each replication destination
    (``Collected.syncs``) on its source's ``replicas``; older readings are not kept."""
    for filesystem_id, latest in syncs.items():
        fs = by_id.get(filesystem_id)
        if fs is None or not fs.replicas:
            continue
        changed = False
        for r in fs.replicas:
            got = latest.get(r.get("destination"))
            if got is None:
                continue
            at, seconds = got
            if r.get("sync_at") is None or datetime.fromisoformat(r["sync_at"]) < at:
                r["sync_at"], r["sync_seconds"] = at.isoformat(), seconds
                changed = True
        if changed:
            FileSystem.objects.filter(pk=fs.pk).update(replicas=fs.replicas)


@dataclass
class Outcome:
    api_calls: int = 0
    rows: int = 0
    dropped: list[Dropped] = field(default_factory=list)  # values CloudWatch sent, not kept
    #: Minutes that were empty when first collected and had data on the late look.
    late_rows: int = 0

    @property
    def dropped_values(self) -> int:
        return sum(d.count for d in self.dropped)

    def dropped_note(self, limit: int = 1000) -> str:
        """What was dropped, for the collection's record: "fs-1 PercentIOLimit Maximum: 2
        not a number; …"."""
        note = "; ".join(str(d) for d in self.dropped)
        return note if len(note) <= limit else note[: limit - 1] + "…"


def collect_metrics(
    rc: RegionCollection,
    now: datetime,
    *,
    max_datapoints: int | None = None,
    watch: Stopwatch | None = None,
) -> Outcome:
    """Collect every live file system of the region over its window (settled, starting at
    its last collected end, back-fill bounded), oldest sub-window first, saving each
    sub-window as it lands so a back-fill shows progress and survives a crash.

    Every ``VIGIL_EFS_LATE_DATA_MINUTES`` the window also reaches back to the minutes
    collected since the last such look (``rc.late_look_from``), in the same calls: of those,
    only the minutes with no row yet are saved, so a gap that CloudWatch filled late is filled
    and nothing else is rewritten. Each minute thus gets one more look, an hour or so after it
    was first collected, while most cycles ask only for their new minutes.

    ``watch`` gets the time of the calls ("fetch"), of reading their answers ("parse") and
    of writing the rows ("save")."""
    watch = watch or Stopwatch()
    interval = timedelta(minutes=settings.VIGIL_EFS_INTERVAL_MINUTES)
    late = timedelta(minutes=settings.VIGIL_EFS_LATE_DATA_MINUTES)
    look = late > timedelta(0) and rc.next_late_look <= now
    looked = False
    groups = _due_windows(rc, now)
    outcome = Outcome()
    cw = cloudwatch_client(rc.region.code, rc.region.account.access)
    for window, members in groups.items():
        pks = [fs.pk for fs in members]
        is_backfill = any(fs.collected_until for fs in members) and (
            window.end - window.start > 2 * interval
        )
        if is_backfill:
            FileSystem.objects.filter(pk__in=pks).update(
                backfill_from=window.start, backfill_to=window.end
            )
        steady = not is_backfill and any(fs.collected_until for fs in members)
        asked = with_late_look(window, rc.late_look_from) if look and steady else window
        looked = looked or (look and steady)
        reading = cloudwatch.read(
            cw, [fs.ref() for fs in members], asked, max_datapoints=max_datapoints, watch=watch
        )
        for piece in reading:
            _save_piece(rc, piece, window, members, outcome, watch)
        if is_backfill:
            FileSystem.objects.filter(pk__in=pks).update(backfill_from=None, backfill_to=None)
    fresh = [w.start for w in groups]
    if fresh and (looked or rc.late_look_from is None):
        # The minutes collected from here on wait for the next look.
        rc.late_look_from = min(fresh)
        rc.next_late_look = now + late
        RegionCollection.objects.filter(pk=rc.pk).update(
            late_look_from=rc.late_look_from, next_late_look=rc.next_late_look
        )
    return outcome


def _due_windows(rc: RegionCollection, now: datetime) -> dict[Window, list[FileSystem]]:
    """The region's live file systems grouped by the window each is due (most share one)."""
    settle = timedelta(minutes=settings.VIGIL_EFS_SETTLE_MINUTES)
    backfill = timedelta(hours=settings.VIGIL_EFS_BACKFILL_HOURS)
    groups: dict[Window, list[FileSystem]] = {}
    for fs in FileSystem.objects.filter(region=rc.region, deleted__isnull=True):
        window = collection_window(now, fs.collected_until, settle=settle, backfill=backfill)
        if window is not None:
            groups.setdefault(window, []).append(fs)
    return groups


def _save_piece(
    rc: RegionCollection,
    piece: Piece[Collected],
    window: Window,
    members: list[FileSystem],
    outcome: Outcome,
    watch: Stopwatch,
) -> None:
    """One window piece's rows saved (only the gaps of its late-look part, before
    ``window``), its dropped values logged and counted, its file systems moved on."""
    by_id = {fs.filesystem_id: fs for fs in members}
    got = piece.got
    outcome.api_calls += piece.calls
    for problem in got.problems:
        log.warning("EFS %s: %s", rc.region, problem)
    for d in got.dropped:
        log.warning(
            "EFS %s %s: dropped %d %s value(s) of %s (never stored or charted)",
            rc.region, d.filesystem_id, d.count, d.reason, d.metric,
        )  # fmt: skip
    outcome.dropped += got.dropped
    save_syncs(by_id, got.syncs)
    values = {by_id[fid].pk: v for fid, v in got.rows.items() if fid in by_id}
    with watch.part("save"), transaction.atomic():
        if piece.window.start < window.start:  # the late look: fill only what is still a gap
            looked_again, values = _split_at(values, window.start)
            filled = history.save_minutes(looked_again, only_gaps=True)
            outcome.late_rows += filled
            outcome.rows += filled
        outcome.rows += history.save_minutes(values)
        if piece.window.end > window.start:
            FileSystem.objects.filter(pk__in=[fs.pk for fs in members]).update(
                collected_until=piece.window.end, last_error="", last_error_at=None
            )


def _split_at(values: dict, moment: datetime) -> tuple[dict, dict]:
    """``values`` ({pk: {minute: fields}}) before ``moment``, and from it on."""
    before = {
        pk: {t: v for t, v in minutes.items() if t < moment} for pk, minutes in values.items()
    }
    after = {
        pk: {t: v for t, v in minutes.items() if t >= moment} for pk, minutes in values.items()
    }
    return before, after


#: File systems judged per read of their samples (some 180 rows each): bounds a worker's memory
#: in a region of thousands.
JUDGE_BATCH = 500


def judge_region(rc: RegionCollection, now: datetime) -> dict[str, int]:
    """Verdict for every live file system of the region, recorded through alerts: the
    figures of a batch in one statement, the reasons that changed in another, each status
    change with its transition."""
    limits = pricing.limits_table()
    th = thresholds(limits)
    span = max(th.forecast_window, th.stale_after)
    resolve = region_thresholds.resolver("efs", rc.region, th)  # each one's, over ``th``
    live = FileSystem.objects.filter(region=rc.region, deleted__isnull=True)
    filesystems = list(live.select_related("region__account"))
    counts: dict[str, int] = {}
    with transaction.atomic():  # one commit for the region, not one per file system
        for i in range(0, len(filesystems), JUDGE_BATCH):
            batch = filesystems[i : i + JUDGE_BATCH]
            samples = history.load_samples(
                [fs.pk for fs in batch],
                now - span,
                now + timedelta(minutes=1),
                fields=history.VERDICT_FIELDS,
            )
            notes = client_notes([fs.pk for fs in batch], now)
            judged = [
                (
                    fs,
                    clients.with_client_notes(
                        judge(fs, samples.pop(fs.pk), now, resolve(fs), rc.last_error, limits),
                        notes.get(fs.pk, []),
                    ),
                )
                for fs in batch
            ]
            _save_figures(judged)
            alerts.record_many(judged)
            for _, verdict in judged:
                counts[verdict.status.value] = counts.get(verdict.status.value, 0) + 1
    return counts


def client_notes(filesystem_ids: list[int], now: datetime) -> dict[int, list[str]]:
    """The lock-trap notes of each file system's clients that still report (one query)."""
    since = now - timedelta(minutes=settings.VIGIL_EFS_CLIENT_STALE_MINUTES)
    rows = (
        NfsMount.objects.filter(filesystem_id__in=filesystem_ids, client__last_push__gte=since)
        .values_list("filesystem_id", "client__hostname", "client__identity", "client__lookups",
                     "client__locks")
    )  # fmt: skip
    seen: dict[int, dict] = {}
    for fs_id, hostname, identity, lookups, locks in rows:  # a client's mounts: once
        seen.setdefault(fs_id, {})[identity] = (hostname or identity, lookups, locks)
    warn = settings.VIGIL_EFS_CLIENT_LOOKUP_WARN_SECONDS
    return {fs_id: clients.lock_trap(found.values(), warn) for fs_id, found in seen.items()}


def _save_figures(judged: list[tuple[FileSystem, Verdict]]) -> None:
    """Each file system's figures: the verdict's, with the cost comparison's kept."""
    field = FileSystem._meta.get_field("figures")
    rows = []
    for fs, verdict in judged:
        fs.figures = {**pricing.kept(fs.figures), **jsonable(verdict.figures)}
        rows.append((field.get_db_prep_save(fs.figures, connection), fs.pk))
    q = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {q(FileSystem._meta.db_table)} SET {q('figures')} = %s WHERE {q('id')} = %s",
            rows,
        )


def judge(
    fs: FileSystem,
    samples,
    now: datetime,
    th: Thresholds,
    region_error: str,
    limits: dict | None = None,
) -> Verdict:
    has_storage = any(s.storage_standard_bytes is not None for s in samples)
    verdict = filesystem_verdict(
        samples,
        now,
        throughput_mode=fs.throughput_mode,
        performance_mode=fs.performance_mode,
        standard_bytes=None if has_storage else fs.size_standard_bytes,
        thresholds=th,
        file_system_type=fs.file_system_type,
        region=fs.region.code,
        limits=limits if limits is not None else pricing.limits_table(),
        replicas=fs.replica_states(),
    )
    if verdict.status is Status.UNKNOWN and region_error:
        return Verdict(
            verdict.status,
            f"{verdict.reason}; collection failing: {region_error}",
            verdict.figures,
            cause=access_cause(fs.region),
        )
    return verdict


def access_cause(region) -> Cause:
    """The account-region whose AWS calls fail (``lib.status.aws_access``)."""
    return aws_access(region.account_id, str(region.account), region.code)


def run_cycle(collection_id: int, now: datetime) -> dict:
    """One account-region's cycle (``tasks.collect_region`` holds its lease): discover when
    due, collect and back-fill, roll up, price the stalest mode comparisons, judge; a failed
    AWS call is kept as the region's error. What it did, for the task's result, with the wall
    and CPU seconds of each part ("seconds": discovery, fetch, parse, save, roll-up, pricing,
    judge, other)."""
    watch = Stopwatch()
    rc = RegionCollection.objects.select_related("region__account").get(pk=collection_id)
    outcome = None
    try:
        if rc.next_discovery <= now:
            access = rc.region.account.access
            with watch.part("discovery"):
                found = elasticfilesystem.describe_file_systems(rc.region.code, access)
                replications = elasticfilesystem.describe_replications(rc.region.code, access)
                save_discovery(rc, found, now, replications)
                targets = elasticfilesystem.describe_mount_targets(
                    rc.region.code, [info.id for info in found], access
                )
                save_mount_targets(rc, targets)
            rc.next_discovery = now + timedelta(minutes=settings.VIGIL_EFS_DISCOVERY_MINUTES)
        outcome = collect_metrics(rc, now, watch=watch)
        rc.last_success, rc.last_error, rc.last_error_at = now, "", None
        rc.api_calls = outcome.api_calls
        rc.dropped_values, rc.dropped_note = outcome.dropped_values, outcome.dropped_note()
    except (ClientError, BotoCoreError) as exc:
        rc.last_error, rc.last_error_at = aws.describe_error(exc), now
        FileSystem.objects.filter(region=rc.region, deleted__isnull=True).update(
            last_error=rc.last_error, last_error_at=now
        )
        log.warning("EFS collection in %s failed: %s", rc.region, rc.last_error)
    if rc.next_rollup <= now:
        with watch.part("roll-up"):
            for fs in FileSystem.objects.filter(region=rc.region):
                history.rollup(fs, now)
        rc.next_rollup = now + timedelta(hours=1)
    # The stalest mode comparisons, a share of the region a cycle (see pricing.REFRESH).
    interval = timedelta(minutes=settings.VIGIL_EFS_INTERVAL_MINUTES)
    with watch.part("pricing"):
        pricing.price_region(rc, now, spread=interval)
    rc.save(update_fields=["next_discovery", "next_rollup", *RegionCollection.OUTCOME_FIELDS])
    with watch.part("judge"):
        counts = judge_region(rc, now)
    return {
        "api_calls": outcome.api_calls if outcome else 0,
        "rows": outcome.rows if outcome else 0,
        "dropped": outcome.dropped_values if outcome else 0,
        "late_rows": outcome.late_rows if outcome else 0,
        "statuses": counts,
        "seconds": watch.split(),
    }

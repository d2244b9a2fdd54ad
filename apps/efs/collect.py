"""One account-region's EFS work, between the adapters and the database: discovery,
collection of a window (with back-fill progress saved as it goes) and the verdicts.

The Celery tasks (``tasks.py``) call these; each step is safe to run twice: discovery is an
upsert, minutes are upserted on (file system, minute), and a verdict only writes a
transition when the status changes (``alerts.record``).
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction

from apps import alerts
from apps.lib.status import Status, Verdict

from . import cloudwatch, history
from .efs_api import FileSystemInfo
from .forecast import Thresholds, filesystem_verdict
from .models import FileSystem, RegionCollection
from .queries import collection_window, plan_requests, samples_from_responses

log = logging.getLogger(__name__)

DISCOVERED_FIELDS = (
    "name",
    "tags",
    "performance_mode",
    "throughput_mode",
    "provisioned_mibps",
    "size_total_bytes",
    "size_standard_bytes",
    "size_ia_bytes",
    "created_at",
)


def thresholds() -> Thresholds:
    return Thresholds(
        stale_after=timedelta(minutes=settings.VIGIL_EFS_STALE_MINUTES),
        forecast_window=timedelta(hours=settings.VIGIL_EFS_FORECAST_HOURS),
    )


@transaction.atomic
def save_discovery(rc: RegionCollection, found: list[FileSystemInfo], now: datetime) -> int:
    """Upsert what ``describe_file_systems`` found; mark the vanished deleted (history kept)."""
    existing = {fs.filesystem_id: fs for fs in FileSystem.objects.filter(region=rc.region)}
    for info in found:
        values = {
            "name": info.name,
            "tags": info.tags,
            "performance_mode": info.performance_mode,
            "throughput_mode": info.throughput_mode,
            "provisioned_mibps": info.provisioned_mibps,
            "size_total_bytes": info.size_total_bytes,
            "size_standard_bytes": info.size_standard_bytes,
            "size_ia_bytes": info.size_ia_bytes,
            "created_at": info.created_at,
        }
        fs = existing.get(info.id)
        if fs is None:
            FileSystem.objects.create(region=rc.region, filesystem_id=info.id, **values)
        elif fs.deleted or any(getattr(fs, k) != v for k, v in values.items()):
            FileSystem.objects.filter(pk=fs.pk).update(deleted=None, **values)
    seen = {info.id for info in found}
    gone = FileSystem.objects.filter(region=rc.region, deleted__isnull=True)
    gone.exclude(filesystem_id__in=seen).update(deleted=now)
    return len(found)


@dataclass
class Outcome:
    api_calls: int = 0
    queries: int = 0
    rows: int = 0


def collect_metrics(
    rc: RegionCollection, now: datetime, *, max_datapoints: int | None = None
) -> Outcome:
    """Collect every live file system of the region over its window (settled, starting at
    its last collected end, back-fill bounded), oldest sub-window first, saving each
    sub-window as it lands so a back-fill shows progress and survives a crash."""
    settle = timedelta(minutes=settings.VIGIL_EFS_SETTLE_MINUTES)
    backfill = timedelta(hours=settings.VIGIL_EFS_BACKFILL_HOURS)
    interval = timedelta(minutes=settings.VIGIL_EFS_INTERVAL_MINUTES)
    groups: dict = {}
    for fs in FileSystem.objects.filter(region=rc.region, deleted__isnull=True):
        window = collection_window(now, fs.collected_until, settle=settle, backfill=backfill)
        if window is not None:
            groups.setdefault(window, []).append(fs)
    outcome = Outcome()
    cw = cloudwatch.client(rc.region.code, rc.region.account.access)
    for window, members in groups.items():
        by_id = {fs.filesystem_id: fs for fs in members}
        pks = [fs.pk for fs in members]
        is_backfill = any(fs.collected_until for fs in members) and (
            window.end - window.start > 2 * interval
        )
        if is_backfill:
            FileSystem.objects.filter(pk__in=pks).update(
                backfill_from=window.start, backfill_to=window.end
            )
        requests = plan_requests([fs.ref() for fs in members], window)
        if not requests:
            continue
        outcome.queries += sum(len(r.queries) for r in requests if r.window == requests[0].window)
        for piece, batch in itertools.groupby(requests, key=lambda r: r.window):
            answers = [
                cloudwatch.get_metric_data(cw, r, max_datapoints=max_datapoints) for r in batch
            ]
            outcome.api_calls += sum(a.calls for a in answers)
            got = samples_from_responses(
                (p for a in answers for p in a.pages), window=piece, filesystem_ids=by_id
            )
            for problem in got.problems:
                log.warning("EFS %s: %s", rc.region, problem)
            with transaction.atomic():
                outcome.rows += history.save_samples(
                    {by_id[fid].pk: s for fid, s in got.samples.items() if fid in by_id}
                )
                FileSystem.objects.filter(pk__in=pks).update(
                    collected_until=piece.end, last_error="", last_error_at=None
                )
        if is_backfill:
            FileSystem.objects.filter(pk__in=pks).update(backfill_from=None, backfill_to=None)
    return outcome


def judge_region(rc: RegionCollection, now: datetime) -> dict[str, int]:
    """Verdict for every live file system of the region, recorded through alerts."""
    th = thresholds()
    span = max(th.forecast_window, th.stale_after)
    filesystems = list(FileSystem.objects.filter(region=rc.region, deleted__isnull=True))
    samples = history.load_samples(
        [fs.pk for fs in filesystems],
        now - span,
        now + timedelta(minutes=1),
        fields=history.VERDICT_FIELDS,
    )
    counts: dict[str, int] = {}
    with transaction.atomic():  # one commit for the region, not one per file system
        for fs in filesystems:
            verdict = judge(fs, samples[fs.pk], now, th, rc.last_error)
            FileSystem.objects.filter(pk=fs.pk).update(figures=_jsonable(verdict.figures))
            alerts.record(fs, verdict)
            counts[verdict.status.value] = counts.get(verdict.status.value, 0) + 1
    return counts


def judge(fs: FileSystem, samples, now: datetime, th: Thresholds, region_error: str) -> Verdict:
    has_storage = any(s.storage_standard_bytes is not None for s in samples)
    verdict = filesystem_verdict(
        samples,
        now,
        throughput_mode=fs.throughput_mode,
        standard_bytes=None if has_storage else fs.size_standard_bytes,
        thresholds=th,
    )
    if verdict.status is Status.UNKNOWN and region_error:
        return Verdict(
            verdict.status, f"{verdict.reason}; collection failing: {region_error}", verdict.figures
        )
    return verdict


def _jsonable(figures: dict) -> dict:
    return {
        k: v if v is None or isinstance(v, bool | int | float | str) else str(v)
        for k, v in figures.items()
    }

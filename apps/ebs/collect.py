"""One account-region's EBS work, between the adapters and the database: discovery of the
volumes and their instances, collection of a window (every query in the fewest calls, saved
piece by piece so a back-fill progresses), and the verdicts.

The Celery task (``tasks.collect_region``) calls ``run_cycle``; each step is safe to run twice:
discovery is an upsert, minutes are upserted on (volume, minute), and a verdict writes a
transition only when the status changes (``alerts.record_many``).
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
from apps.lib.cloudwatch import client as cloudwatch_client
from apps.lib.cloudwatch import collection_window
from apps.lib.status import Status, Verdict, aws_access, jsonable
from apps.lib.stopwatch import Stopwatch
from apps.regions.models import Region

from . import cloudwatch, ec2, history, hosts
from .cloudwatch_plan import WINDOW_STEP_S, Dropped, floor_calls
from .ec2 import InstanceInfo, VolumeInfo
from .models import DESCRIBED_FIELDS, INSTANCE_FIELDS, Instance, RegionCollection, Volume
from .verdict import InstanceFacts, Thresholds, VolumeFacts, volume_verdict
from .verdict import instance_figures as verdict_instance_figures

log = logging.getLogger(__name__)

#: Volumes judged per read of their minutes: bounds a worker's memory in a large region.
JUDGE_BATCH = 500


def thresholds() -> Thresholds:
    return Thresholds(
        stale_after=timedelta(minutes=settings.VIGIL_EBS_STALE_MINUTES),
        forecast_window=timedelta(hours=settings.VIGIL_EBS_FORECAST_HOURS),
    )


def _attachment(info: VolumeInfo):
    """The instance the volume is attached to (the first, for Multi-Attach), or None."""
    live = [a for a in info.attachments if a.state in ("attached", "attaching", "busy")]
    return live[0] if live else None


@transaction.atomic
def save_discovery(
    rc: RegionCollection, volumes: list[VolumeInfo], instances: list[InstanceInfo], now: datetime
) -> int:
    """Upsert the volumes and instances found; mark the vanished deleted (history kept)."""
    region = rc.region
    known = _save_instances(region, instances, now)
    existing = {v.volume_id: v for v in Volume.objects.filter(region=region)}
    created = []
    for info in volumes:
        attached = _attachment(info)
        instance = known.get(attached.instance_id) if attached else None
        values = {
            "name": info.name,
            "volume_type": info.volume_type,
            "size_gib": info.size_gib,
            "iops": info.iops,
            "throughput_mibps": info.throughput_mibps,
            "state": info.state,
            "availability_zone": info.availability_zone,
            "multi_attach": info.multi_attach,
            "tags": info.tags,
            "created_at": info.created_at,
            "device": attached.device if attached else "",
            "attachments": [
                {"instance": a.instance_id, "device": a.device, "state": a.state}
                for a in info.attachments
            ],
            "instance_id": instance.pk if instance else None,
        }
        volume = existing.get(info.id)
        if volume is None:
            created.append(Volume(region=region, volume_id=info.id, **values))
        elif (
            volume.deleted
            or any(
                getattr(volume, k) != v
                for k, v in values.items()
                if k in (*DESCRIBED_FIELDS, "name")
            )
            or volume.instance_id != values["instance_id"]
        ):
            Volume.objects.filter(pk=volume.pk).update(deleted=None, **values)
    Volume.objects.bulk_create(created, batch_size=500)
    Volume.objects.filter(region=region, deleted__isnull=True).exclude(
        volume_id__in={v.id for v in volumes}
    ).update(deleted=now)
    return len(volumes)


def _save_instances(
    region: Region, instances: list[InstanceInfo], now: datetime
) -> dict[str, Instance]:
    """``save_discovery``'s instances: upsert those found, mark the vanished deleted; the
    region's instances by id, for the volumes to point at."""
    known = {i.instance_id: i for i in Instance.objects.filter(region=region)}
    new = []
    for info in instances:
        values = {name: getattr(info, name) for name in INSTANCE_FIELDS}
        values["private_ips"] = list(info.private_ips)
        found = known.get(info.id)
        if found is None:
            new.append(Instance(region=region, instance_id=info.id, **values))
        elif found.deleted or any(getattr(found, k) != v for k, v in values.items()):
            Instance.objects.filter(pk=found.pk).update(deleted=None, **values)
    Instance.objects.bulk_create(new, batch_size=500)
    if new:
        known = {i.instance_id: i for i in Instance.objects.filter(region=region)}
    seen = {info.id for info in instances}
    Instance.objects.filter(region=region, deleted__isnull=True).exclude(
        instance_id__in=seen
    ).update(deleted=now)
    return known


def discover(rc: RegionCollection, now: datetime) -> int:
    access = rc.region.account.access
    volumes = ec2.describe_volumes(rc.region.code, access)
    ids = {a.instance_id for v in volumes if (a := _attachment(v))}
    instances = ec2.describe_instances(rc.region.code, ids, access)
    return save_discovery(rc, volumes, instances, now)


@dataclass
class Outcome:
    api_calls: int = 0
    floor_calls: int = 0
    queries: int = 0
    rows: int = 0
    dropped: list[Dropped] = field(default_factory=list)

    @property
    def dropped_values(self) -> int:
        return sum(d.count for d in self.dropped)

    def dropped_note(self, limit: int = 1000) -> str:
        note = "; ".join(str(d) for d in self.dropped)
        return note if len(note) <= limit else note[: limit - 1] + "…"


def collect_metrics(
    rc: RegionCollection,
    now: datetime,
    *,
    max_datapoints: int | None = None,
    watch: Stopwatch | None = None,
) -> Outcome:
    """Collect every attached volume of the region, and its instance, over the window each
    group of volumes is due (settled, from its last collected end, back-fill bounded),
    oldest piece first, saving each piece as it lands."""
    watch = watch or Stopwatch()
    settle = timedelta(minutes=settings.VIGIL_EBS_SETTLE_MINUTES)
    backfill = timedelta(hours=settings.VIGIL_EBS_BACKFILL_HOURS)
    lookback = max(timedelta(hours=settings.VIGIL_EBS_FORECAST_HOURS), timedelta(minutes=30))
    volumes = Volume.objects.filter(
        region=rc.region, deleted__isnull=True, instance__isnull=False
    ).select_related("instance")
    groups: dict = {}
    for v in volumes:
        window = collection_window(
            now,
            v.collected_until,
            settle=settle,
            backfill=backfill,
            first_lookback=lookback,
            period_s=WINDOW_STEP_S,
        )
        if window is not None:
            groups.setdefault(window, []).append(v)
    outcome = Outcome()
    if not groups:
        return outcome
    cw = cloudwatch_client(rc.region.code, rc.region.account.access)
    asked: set[int] = set()
    for window, members in sorted(groups.items(), key=lambda item: item[0].start):
        instances = {v.instance.pk: v.instance for v in members if v.instance.pk not in asked}
        asked |= set(instances)
        vrefs = [v.ref(v.instance.instance_id) for v in members]
        irefs = [i.ref() for i in instances.values()]
        reading = cloudwatch.read(
            cw, vrefs, irefs, window, max_datapoints=max_datapoints, watch=watch
        )
        outcome.queries += reading.queries
        outcome.floor_calls += floor_calls(reading.queries, window)
        volume_pks = {v.volume_id: v.pk for v in members}
        instance_pks = {i.instance_id: i.pk for i in instances.values()}
        pks = list(volume_pks.values())
        for piece in reading:
            outcome.api_calls += piece.calls
            got = piece.got
            for problem in got.problems:
                log.warning("EBS %s: %s", rc.region, problem)
            outcome.dropped += got.dropped
            with watch.part("save"), transaction.atomic():
                outcome.rows += history.save(got.volumes, got.instances, volume_pks, instance_pks)
                Volume.objects.filter(pk__in=pks).update(collected_until=piece.window.end)
    return outcome


def judge_region(rc: RegionCollection, now: datetime) -> dict[str, int]:
    """A verdict for every live volume of the region, recorded through alerts; the instances'
    burst figures kept on them for the pages that show them (Galera, RAID)."""
    th = thresholds()
    span = max(th.forecast_window, th.stale_after, th.utilisation_for)
    volumes = list(
        Volume.objects.filter(region=rc.region, deleted__isnull=True).select_related(
            "instance", "region__account"
        )
    )
    counts: dict[str, int] = {}
    instance_figures: dict[int, dict] = {}
    carried = hosts.carried(rc.region_id)
    with transaction.atomic():
        for i in range(0, len(volumes), JUDGE_BATCH):
            batch = volumes[i : i + JUDGE_BATCH]
            start, end = now - span, now + timedelta(minutes=1)
            samples = history.volume_samples([v.pk for v in batch], start, end)
            instance_pks = sorted({v.instance_id for v in batch if v.instance_id})
            by_instance = history.instance_samples(instance_pks, start, end)
            judged = []
            for v in batch:
                instance = None
                if v.instance is not None:
                    instance = InstanceFacts(v.instance.label, by_instance.get(v.instance.pk, ()))
                on = carried.get(v.instance_id, ()) if v.instance_id else ()
                verdict = judge(v, samples[v.pk], now, th, instance, rc.last_error, on)
                judged.append((v, verdict))
                if instance is not None and v.instance.pk not in instance_figures:
                    instance_figures[v.instance.pk] = verdict_instance_figures(instance, now, th)
            _save_figures(Volume, [(v, verdict.figures) for v, verdict in judged])
            alerts.record_many(judged)
            for _, verdict in judged:
                counts[verdict.status.value] = counts.get(verdict.status.value, 0) + 1
        instances = Instance.objects.in_bulk(list(instance_figures))
        _save_figures(Instance, [(instances[pk], f) for pk, f in instance_figures.items()])
    return counts


def judge(
    v: Volume,
    samples,
    now: datetime,
    th: Thresholds,
    instance: InstanceFacts | None,
    region_error: str,
    carries=(),
) -> Verdict:
    facts = VolumeFacts(
        v.volume_type, v.size_gib, v.iops, v.throughput_mibps, attached=v.instance is not None
    )
    verdict = volume_verdict(samples, now, facts, instance=instance, carries=carries, thresholds=th)
    if verdict.status is Status.UNKNOWN and region_error:
        reason = f"{verdict.reason}; collection failing: {region_error}"
        region = v.region
        cause = aws_access(region.account_id, str(region.account), region.code)
        return Verdict(verdict.status, reason, verdict.figures, cause=cause)
    return verdict


def _save_figures(model, rows: list[tuple[object, dict]]) -> None:
    """Each row's figures in one statement per batch (no model save per volume)."""
    column = model._meta.get_field("figures")
    q = connection.ops.quote_name
    values = []
    for obj, figures in rows:
        obj.figures = jsonable(figures)
        values.append((column.get_db_prep_save(obj.figures, connection), obj.pk))
    if not values:
        return
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {q(model._meta.db_table)} SET {q('figures')} = %s WHERE {q('id')} = %s",
            values,
        )


def run_cycle(collection_id: int, now: datetime) -> dict:
    """One account-region's cycle (``tasks.collect_region`` holds its lease): discover when
    due, collect and back-fill, judge; a failed AWS call is kept as the region's error. What
    it did, with the calls made against the floor and the seconds of each part."""
    watch = Stopwatch()
    rc = RegionCollection.objects.select_related("region__account").get(pk=collection_id)
    outcome = None
    try:
        if rc.next_discovery <= now:
            with watch.part("discovery"):
                discover(rc, now)
            rc.next_discovery = now + timedelta(minutes=settings.VIGIL_EBS_DISCOVERY_MINUTES)
        outcome = collect_metrics(rc, now, watch=watch)
        rc.last_success, rc.last_error, rc.last_error_at = now, "", None
        rc.api_calls, rc.floor_calls, rc.queries = (
            outcome.api_calls,
            outcome.floor_calls,
            outcome.queries,
        )
        rc.dropped_values, rc.dropped_note = outcome.dropped_values, outcome.dropped_note()
    except (ClientError, BotoCoreError) as exc:
        rc.last_error, rc.last_error_at = aws.describe_error(exc), now
        log.warning("EBS collection in %s failed: %s", rc.region, rc.last_error)
    rc.save(update_fields=["next_discovery", *RegionCollection.OUTCOME_FIELDS])
    with watch.part("judge"):
        counts = judge_region(rc, now)
    return {
        "api_calls": outcome.api_calls if outcome else 0,
        "floor_calls": outcome.floor_calls if outcome else 0,
        "queries": outcome.queries if outcome else 0,
        "rows": outcome.rows if outcome else 0,
        "dropped": outcome.dropped_values if outcome else 0,
        "statuses": counts,
        "seconds": watch.split(),
    }

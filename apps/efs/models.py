"""EFS file systems (subjects), their per-minute metric rows and hourly rollups.

One ``MetricMinute`` row per file system per minute holds every metric of that minute (a wide
row); a column CloudWatch sent nothing for is NULL, never zero. Minutes older than
``VIGIL_EFS_MINUTE_RETENTION_DAYS`` are rolled up into ``MetricHour`` rows and deleted; hours
older than ``VIGIL_EFS_HOUR_RETENTION_DAYS`` are deleted. ``RegionCollection`` is the
collection state of one account-region (its lease, when it is due, its last error).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone

from apps.lib import leases
from apps.regions.models import Region, Subject

from .cloudwatch_plan import FileSystemRef
from .metrics import VALUE_FIELDS, Sample
from .replication import Replica

#: What DescribeFileSystems says of a file system besides its name (the API shows them in
#: this order; ``collect.save_discovery`` copies them).
DESCRIBED_FIELDS = (
    "performance_mode",
    "throughput_mode",
    "provisioned_mibps",
    "size_total_bytes",
    "size_standard_bytes",
    "size_ia_bytes",
    "size_archive_bytes",
    "availability_zone_name",
    "tags",
    "created_at",
)


class FileSystem(Subject):
    """One EFS file system of an account-region (the account is ``region.account``)."""

    concern = "efs"

    filesystem_id = models.CharField("file system id", max_length=64)
    name = models.CharField(max_length=256, blank=True, help_text="The Name tag.")
    tags = models.JSONField(default=dict, blank=True)
    performance_mode = models.CharField(max_length=32, default="generalPurpose")
    throughput_mode = models.CharField(max_length=32, default="bursting")
    provisioned_mibps = models.FloatField("provisioned MiB/s", null=True, blank=True)
    size_total_bytes = models.BigIntegerField(null=True, blank=True)
    size_standard_bytes = models.BigIntegerField(null=True, blank=True)
    size_ia_bytes = models.BigIntegerField(null=True, blank=True)
    size_archive_bytes = models.BigIntegerField(null=True, blank=True)
    availability_zone_name = models.CharField(
        max_length=64, blank=True, help_text="One Zone file systems only (DescribeFileSystems)."
    )
    replicas = models.JSONField(
        default=list,
        blank=True,
        help_text="Its replication destinations (DescribeReplicationConfigurations) and the "
        "latest TimeSinceLastSync of each: [{destination, region, status, last_replicated, "
        "sync_seconds, sync_at}].",
    )
    created_at = models.DateTimeField(null=True, blank=True, help_text="Created in AWS.")
    discovered = models.DateTimeField(default=timezone.now, editable=False)
    deleted = models.DateTimeField(
        null=True, blank=True, help_text="When discovery stopped finding it; history is kept."
    )
    collected_until = models.DateTimeField(
        null=True, blank=True, help_text="End (exclusive) of the last collected window."
    )
    backfill_from = models.DateTimeField(null=True, blank=True)
    backfill_to = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)
    figures = models.JSONField(default=dict, blank=True, help_text="Current figures.")
    thresholds = models.JSONField(
        default=dict,
        blank=True,
        help_text='This file system\'s own thresholds, e.g. {"io_limit_pct": 70} '
        "(apps/efs/verdict.py PER_SUBJECT); the others are the global defaults.",
    )
    changed = models.DateTimeField(
        default=timezone.now,
        editable=False,
        db_index=True,
        help_text="Last write to the row: set by a database trigger on every insert and update, "
        "whatever wrote it (the API list's validator).",
    )

    class Meta:
        ordering = ["region", "name", "filesystem_id"]
        constraints = [
            models.UniqueConstraint(fields=["region", "filesystem_id"], name="efs_fs_unique")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.filesystem_id})" if self.name else self.filesystem_id

    def get_absolute_url(self) -> str:
        return reverse("efs:detail", args=[self.pk])

    @property
    def label(self) -> str:
        return self.name or self.filesystem_id

    @property
    def file_system_type(self) -> str:
        """``one_zone`` when DescribeFileSystems named an Availability Zone, else ``regional``."""
        return "one_zone" if self.availability_zone_name else "regional"

    def ref(self) -> FileSystemRef:
        replica_ids = tuple(
            r["destination"]
            for r in self.replicas or []
            if isinstance(r, dict) and r.get("destination") and r.get("status") != "DELETING"
        )
        return FileSystemRef(
            self.filesystem_id, self.performance_mode, self.throughput_mode, replica_ids=replica_ids
        )

    def replica_states(self) -> list[Replica]:
        """``replicas`` for the verdict and the page: each destination's last known sync, from
        its latest TimeSinceLastSync (the reading's minute less its value) or AWS's
        LastReplicatedTimestamp, whichever is later."""
        out = []
        for r in self.replicas or []:
            if not isinstance(r, dict) or not r.get("destination"):
                continue
            known = []
            if r.get("sync_at") and isinstance(r.get("sync_seconds"), int | float):
                at = datetime.fromisoformat(r["sync_at"])
                known.append(at - timedelta(seconds=r["sync_seconds"]))
            if r.get("last_replicated"):
                known.append(datetime.fromisoformat(r["last_replicated"]))
            out.append(
                Replica(
                    str(r["destination"]),
                    str(r.get("region") or ""),
                    str(r.get("status") or ""),
                    max(known) if known else None,
                )
            )
        return out

    @property
    def backfill_progress(self) -> float | None:
        """Share of a running back-fill done (0..1), or None when none runs."""
        if self.backfill_from is None or self.backfill_to is None:
            return None
        span = (self.backfill_to - self.backfill_from).total_seconds()
        done_until = self.collected_until or self.backfill_from
        done = (done_until - self.backfill_from).total_seconds()
        return max(0.0, min(1.0, done / span)) if span > 0 else 1.0


class RegionCollection(models.Model):
    """EFS collection state of one account-region: due time, lease, last outcome."""

    region = models.OneToOneField(Region, models.CASCADE, related_name="efs_collection")
    next_due = models.DateTimeField(default=timezone.now)
    next_discovery = models.DateTimeField(default=timezone.now)
    next_rollup = models.DateTimeField(default=timezone.now)
    lease_until = models.DateTimeField(null=True, blank=True, editable=False)
    last_success = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)
    api_calls = models.PositiveIntegerField(default=0, help_text="GetMetricData calls last run.")
    next_late_look = models.DateTimeField(
        default=timezone.now, help_text="When collection next asks again for recent minutes."
    )
    late_look_from = models.DateTimeField(
        null=True, blank=True, help_text="Minutes from here on have not had their late look."
    )
    dropped_values = models.PositiveIntegerField(
        default=0,
        help_text="Values CloudWatch sent last run that were dropped, never stored: NaN, "
        "negative, duplicate or out-of-window timestamps.",
    )
    dropped_note = models.CharField(
        max_length=1000, blank=True, help_text="Which file systems and metrics, and why."
    )

    #: What a collection run leaves (``collect.collect_region`` saves them; the admin shows them).
    OUTCOME_FIELDS = (
        "last_success",
        "last_error",
        "last_error_at",
        "api_calls",
        "dropped_values",
        "dropped_note",
    )

    def __str__(self) -> str:
        return f"EFS collection in {self.region}"

    @classmethod
    def claim_due(cls, now: datetime) -> list[int]:
        """Due collections, each claimed by compare-and-set so one tick queues it."""
        interval = timedelta(minutes=settings.VIGIL_EFS_INTERVAL_MINUTES)
        shown = cls.objects.filter(region__in=Region.objects.shown())
        return leases.claim_due(shown, now, interval)


class MetricColumns(models.Model):
    """The wide row: one nullable column per ``metrics.Sample`` value field."""

    data_read_bytes = models.FloatField(null=True)
    data_read_count = models.FloatField(null=True)
    data_write_bytes = models.FloatField(null=True)
    data_write_count = models.FloatField(null=True)
    metadata_bytes = models.FloatField(null=True)
    metadata_count = models.FloatField(null=True)
    metadata_read_bytes = models.FloatField(null=True)
    metadata_read_count = models.FloatField(null=True)
    metadata_write_bytes = models.FloatField(null=True)
    metadata_write_count = models.FloatField(null=True)
    total_bytes = models.FloatField(null=True)
    total_count = models.FloatField(null=True)
    metered_bytes = models.FloatField(null=True)
    percent_io_limit = models.FloatField(null=True)
    burst_credit_balance = models.FloatField(null=True)
    permitted_throughput = models.FloatField(null=True)
    client_connections = models.FloatField(null=True)
    storage_total_bytes = models.FloatField(null=True)
    storage_standard_bytes = models.FloatField(null=True)
    storage_ia_bytes = models.FloatField(null=True)

    class Meta:
        abstract = True


class MetricMinute(MetricColumns):
    filesystem = models.ForeignKey(FileSystem, models.CASCADE, related_name="minutes")
    ts = models.DateTimeField("minute (UTC)")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["filesystem", "ts"], name="efs_minute_unique")
        ]

    def __str__(self) -> str:
        return f"{self.filesystem_id} {self.ts:%Y-%m-%d %H:%M}"

    def sample(self) -> Sample:
        return Sample(self.ts, 60, **{f: getattr(self, f) for f in VALUE_FIELDS})


class MetricHour(MetricColumns):
    """An hour of minutes: Sums and SampleCounts added, PercentIOLimit the maximum,
    BurstCreditBalance the minimum, the rest averaged; ``minutes`` had data."""

    filesystem = models.ForeignKey(FileSystem, models.CASCADE, related_name="hours")
    ts = models.DateTimeField("hour (UTC)")
    minutes = models.PositiveSmallIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["filesystem", "ts"], name="efs_hour_unique")]

    def __str__(self) -> str:
        return f"{self.filesystem_id} {self.ts:%Y-%m-%d %H}h"

    def sample(self) -> Sample:
        # Rates over the minutes that had data: a partly missing hour is not diluted.
        period = max(1, self.minutes) * 60
        return Sample(self.ts, period, **{f: getattr(self, f) for f in VALUE_FIELDS})

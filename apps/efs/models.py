"""EFS file systems (subjects), their per-minute metric rows and hourly rollups.

One ``MetricMinute`` row per file system per minute holds every metric of that minute (a wide
row); a column CloudWatch sent nothing for is NULL, never zero. Minutes older than
``VIGIL_EFS_MINUTE_RETENTION_DAYS`` are rolled up into ``MetricHour`` rows and deleted; hours
older than ``VIGIL_EFS_HOUR_RETENTION_DAYS`` are deleted. ``RegionCollection`` is the
collection state of one account-region (its lease, when it is due, its last error).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.db.models import Model
from django.urls import reverse
from django.utils import timezone

from apps.alerts.models import subject_history
from apps.lib import leases
from apps.lib.keep import KeepsHistory
from apps.lib.pushtoken import PushTokenHolder
from apps.regions.models import Region, Subject

from . import clients
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


class FileSystem(KeepsHistory, Subject):
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
    mount_target_addresses = models.JSONField(
        default=list, blank=True, help_text="Its mount targets' addresses (DescribeMountTargets)."
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

    #: Found by discovery, marked deleted once AWS no longer lists it: never deleted by hand.
    disable_hint = "turn off its region (enabled: false)"

    def __str__(self) -> str:
        return f"{self.name} ({self.filesystem_id})" if self.name else self.filesystem_id

    def deletion_blockers(self) -> list[str]:
        rows = self.minutes.count() + self.hours.count()
        return [*([f"{rows} metric rows"] if rows else []), *subject_history(self)]

    def get_absolute_url(self) -> str:
        return reverse("efs:filesystem_detail", args=[self.pk])

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


# --- NFS clients (agents/vigil-nfs-push) -----------------------------------------------------


class ClientKey(PushTokenHolder):
    """A push token for a fleet's NFS clients: clients are many and come and go with their
    Auto Scaling groups, so one key serves a fleet and each client names itself in its push
    (``manage.py efs_client_key NAME`` issues one and prints it once)."""

    token_prefix = "vgc_"

    name = models.CharField(max_length=100, unique=True)
    created = models.DateTimeField(default=timezone.now, editable=False)

    def __str__(self) -> str:
        return self.name


class NfsClient(models.Model):
    """An NFS client that pushed its mountstats: an EC2 instance (by its id) or a host."""

    identity = models.CharField(max_length=255, unique=True, help_text="Instance id, or host.")
    hostname = models.CharField(max_length=255, blank=True)
    instance_id = models.CharField(max_length=32, blank=True)
    key = models.ForeignKey(ClientKey, models.SET_NULL, null=True, blank=True)
    first_seen = models.DateTimeField(default=timezone.now, editable=False)
    last_push = models.DateTimeField(db_index=True)
    #: The lock trap: the agent's timed lookups of each NFS server and its opt-in lock tries.
    lookups = models.JSONField(default=list, blank=True)
    locks = models.JSONField(default=list, blank=True)
    #: Of the last push, for SQL to find the trapped clients without reading every one's JSON:
    #: its slowest lookup (seconds) and its locks that did not come.
    slowest_lookup = models.FloatField(null=True, blank=True)
    stuck_locks = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["identity"]

    def __str__(self) -> str:
        if self.instance_id and self.hostname:
            return f"{self.hostname} ({self.instance_id})"
        return self.identity


class NfsMount(models.Model):
    """One NFS mount of a client, as of its last push, tied to an EFS file system when its
    server is one (by name or a mount target's address)."""

    client = models.ForeignKey(NfsClient, models.CASCADE, related_name="mounts")
    filesystem = models.ForeignKey(
        FileSystem, models.SET_NULL, null=True, blank=True, related_name="client_mounts"
    )
    attributed_by = models.CharField(max_length=32, blank=True)
    device = models.CharField(max_length=1024)
    server = models.CharField(max_length=253, blank=True)
    export = models.CharField(max_length=1024, blank=True)
    mountpoint = models.CharField(max_length=1024)
    version = models.CharField(max_length=16, blank=True)
    options = models.JSONField(default=dict, blank=True)
    age_seconds = models.BigIntegerField(null=True, blank=True)
    #: Cumulative counters at the last push (``clients.COUNTERS``), for the next increase.
    counters = models.JSONField(null=True, blank=True)
    #: Per operation at the last push: [ops, retransmissions, timeouts, RTT ms, execute ms]
    #: cumulative, and what they grew by since the push before (``ops_increase``).
    ops = models.JSONField(default=dict, blank=True)
    ops_increase = models.JSONField(default=dict, blank=True)
    last_push = models.DateTimeField()
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["client", "mountpoint"]
        constraints = [
            models.UniqueConstraint(
                fields=["client", "mountpoint", "device"], name="efs_nfsmount_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.client} {self.device} on {self.mountpoint}"


class NfsSample(models.Model):
    """What one mount counted between two pushes (increases, never cumulative values): the
    file system page sums them in SQL per client over its range."""

    mount = models.ForeignKey(NfsMount, models.CASCADE, related_name="samples")
    client = models.ForeignKey(NfsClient, models.CASCADE, related_name="samples")
    filesystem = models.ForeignKey(
        FileSystem, models.CASCADE, null=True, blank=True, related_name="client_samples"
    )
    time = models.DateTimeField(help_text="The push that ended the interval.")
    seconds = models.FloatField(help_text="The interval's length.")
    read_bytes = models.BigIntegerField()
    write_bytes = models.BigIntegerField()
    read_ops = models.BigIntegerField()
    write_ops = models.BigIntegerField()
    metadata_ops = models.BigIntegerField()
    read_rtt_ms = models.BigIntegerField()
    read_execute_ms = models.BigIntegerField()
    write_rtt_ms = models.BigIntegerField()
    write_execute_ms = models.BigIntegerField()
    metadata_rtt_ms = models.BigIntegerField()
    metadata_execute_ms = models.BigIntegerField()
    retrans = models.BigIntegerField()
    timeouts = models.BigIntegerField()

    class Meta:
        indexes = [
            models.Index(fields=["filesystem", "time"], name="efs_nfssample_fs_time"),
            models.Index(fields=["time"], name="efs_nfssample_time"),
        ]

    def __str__(self) -> str:
        return f"{self.mount_id} at {self.time:%Y-%m-%d %H:%M}"


def counter_columns(*prefixes: str) -> Callable[[type[Model]], type[Model]]:
    """Adds to a model one ``BigIntegerField(default=0)`` per ``clients.COUNTERS`` name, for
    each prefix, after the fields of its class body (so its columns keep the order its
    migrations gave them): the tables that sum the counters keep the one list."""

    def add(model: type[Model]) -> type[Model]:
        for prefix in prefixes:
            for name in clients.COUNTERS:
                model.add_to_class(f"{prefix}{name}", models.BigIntegerField(default=0))
        return model

    return add


# The counters' increases summed by hour, then (``opening_``) the client's running totals on
# the file system (``NfsTotal``) before the hour's first increase: what it counted from this
# hour on is its running total less these.
@counter_columns("", "opening_")
class NfsHour(models.Model):
    """A client's increases on one file system summed by hour, added to at each push: the file
    system page reads its range from these (a day of 1,000 clients is 24,000 rows, not the
    1.44 million minutes of ``NfsSample``)."""

    filesystem = models.ForeignKey(FileSystem, models.CASCADE, related_name="client_hours")
    client = models.ForeignKey(NfsClient, models.CASCADE, related_name="hours")
    hour = models.DateTimeField()
    seconds = models.FloatField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["filesystem", "hour", "client"], name="efs_nfshour_unique"
            )
        ]
        indexes = [
            # a client's first hour at or after a range's start (client_history)
            models.Index(fields=["filesystem", "client", "hour"], name="efs_nfshour_fs_client"),
        ]

    def __str__(self) -> str:
        return f"{self.client_id} on {self.filesystem_id} at {self.hour:%Y-%m-%d %H}h"


# The counters' increases summed since the client first pushed.
@counter_columns("")
class NfsTotal(models.Model):
    """A client's running totals on one file system: every increase added to its hours
    (``NfsHour``) is added here too, in the same transaction. What the client counted since an
    hour is its running total less the opening totals of its first hour row from then on, so
    the file system page reads one row per client, not one per client and hour."""

    filesystem = models.ForeignKey(FileSystem, models.CASCADE, related_name="client_totals")
    client = models.ForeignKey(NfsClient, models.CASCADE, related_name="totals")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["filesystem", "client"], name="efs_nfstotal_unique")
        ]

    def __str__(self) -> str:
        return f"{self.client_id} on {self.filesystem_id}"

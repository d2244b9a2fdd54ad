"""EBS volumes (the subjects), the instances they are attached to, their per-minute metric rows,
the collection state of an account-region, and the links that name a Galera node's or a RAID
host's EC2 instance.

One ``VolumeMinute`` row per volume per minute holds every metric of that minute (a wide row);
a column CloudWatch sent nothing for is NULL, never zero. Rows older than
``VIGIL_EBS_MINUTE_RETENTION_DAYS`` are expired hourly (``Concern.history``). Volumes and
instances discovery no longer finds are marked deleted; their history is kept.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.urls import reverse
from django.utils import timezone

from apps.alerts.models import subject_history
from apps.lib import leases
from apps.lib.keep import KeepsHistory
from apps.regions.models import Region, Subject

from .cloudwatch_plan import InstanceRef, VolumeRef
from .limits import VOLUME_FIELDS, Performance, performance

#: What DescribeVolumes says of a volume besides its name (``collect.save_discovery``).
DESCRIBED_FIELDS = (
    "volume_type",
    "size_gib",
    "iops",
    "throughput_mibps",
    "state",
    "availability_zone",
    "multi_attach",
    "tags",
    "created_at",
    "device",
    "attachments",
)
INSTANCE_FIELDS = ("name", "instance_type", "state", "private_ips", "root_device", "tags")


class Instance(models.Model):
    """An EC2 instance volumes are attached to, with its EBS burst balances' figures."""

    region = models.ForeignKey(Region, models.CASCADE, related_name="ebs_instances")
    instance_id = models.CharField(max_length=64)
    name = models.CharField(max_length=256, blank=True, help_text="The Name tag.")
    instance_type = models.CharField(max_length=64, blank=True)
    state = models.CharField(max_length=32, blank=True)
    private_ips = models.JSONField(default=list, blank=True)
    root_device = models.CharField(max_length=64, blank=True)
    tags = models.JSONField(default=dict, blank=True)
    discovered = models.DateTimeField(default=timezone.now, editable=False)
    deleted = models.DateTimeField(null=True, blank=True)
    figures = models.JSONField(default=dict, blank=True, help_text="Current figures.")

    class Meta:
        ordering = ["region", "name", "instance_id"]
        constraints = [
            models.UniqueConstraint(fields=["region", "instance_id"], name="ebs_instance_unique")
        ]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        return f"{self.name} ({self.instance_id})" if self.name else self.instance_id

    def ref(self) -> InstanceRef:
        return InstanceRef(self.instance_id, self.instance_type)


class Volume(KeepsHistory, Subject):
    """One EBS volume of an account-region (the account is ``region.account``)."""

    concern = "ebs"

    volume_id = models.CharField("volume id", max_length=64)
    name = models.CharField(max_length=256, blank=True, help_text="The Name tag.")
    tags = models.JSONField(default=dict, blank=True)
    volume_type = models.CharField(max_length=16)
    size_gib = models.PositiveIntegerField("size (GiB)", default=0)
    iops = models.PositiveIntegerField("IOPS", null=True, blank=True, help_text="Provisioned.")
    throughput_mibps = models.PositiveIntegerField(
        "throughput (MiB/s)", null=True, blank=True, help_text="Provisioned (gp3)."
    )
    state = models.CharField(max_length=32, blank=True)
    availability_zone = models.CharField(max_length=64, blank=True)
    multi_attach = models.BooleanField(default=False)
    created_at = models.DateTimeField(null=True, blank=True, help_text="Created in AWS.")
    instance = models.ForeignKey(
        Instance, models.SET_NULL, null=True, blank=True, related_name="volumes"
    )
    device = models.CharField(max_length=64, blank=True)
    attachments = models.JSONField(default=list, blank=True)
    discovered = models.DateTimeField(default=timezone.now, editable=False)
    deleted = models.DateTimeField(
        null=True, blank=True, help_text="When discovery stopped finding it; history is kept."
    )
    collected_until = models.DateTimeField(
        null=True, blank=True, help_text="End (exclusive) of the last collected window."
    )
    figures = models.JSONField(default=dict, blank=True, help_text="Current figures.")

    class Meta:
        ordering = ["region", "name", "volume_id"]
        constraints = [
            models.UniqueConstraint(fields=["region", "volume_id"], name="ebs_volume_unique")
        ]

    #: Found by discovery, marked deleted once AWS no longer lists it: never deleted by hand.
    disable_hint = "turn off its region (enabled: false)"

    def __str__(self) -> str:
        return self.label

    def deletion_blockers(self) -> list[str]:
        rows = self.minutes.count()
        return [*([f"{rows} metric rows"] if rows else []), *subject_history(self)]

    def get_absolute_url(self) -> str:
        return reverse("ebs:volume_detail", args=[self.pk])

    @property
    def label(self) -> str:
        return f"{self.name} ({self.volume_id})" if self.name else self.volume_id

    @property
    def attached(self) -> bool:
        return self.instance_id is not None

    @property
    def is_root(self) -> bool:
        return (
            bool(self.device)
            and self.instance is not None
            and (self.device == self.instance.root_device)
        )

    @property
    def performance(self) -> Performance:
        return performance(self.volume_type, self.size_gib, self.iops, self.throughput_mibps)

    def ref(self, instance_id: str | None) -> VolumeRef:
        return VolumeRef(self.volume_id, self.volume_type, instance_id)


class RegionCollection(models.Model):
    """EBS collection state of one account-region: due time, lease, last outcome."""

    region = models.OneToOneField(Region, models.CASCADE, related_name="ebs_collection")
    next_due = models.DateTimeField(default=timezone.now)
    next_discovery = models.DateTimeField(default=timezone.now)
    lease_until = models.DateTimeField(null=True, blank=True, editable=False)
    last_success = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)
    api_calls = models.PositiveIntegerField(default=0, help_text="GetMetricData calls last run.")
    floor_calls = models.PositiveIntegerField(
        default=0, help_text="The fewest calls that could have carried the last run's queries."
    )
    queries = models.PositiveIntegerField(default=0, help_text="Metric queries last run.")
    dropped_values = models.PositiveIntegerField(
        default=0, help_text="Values CloudWatch sent last run that were dropped, never stored."
    )
    dropped_note = models.CharField(max_length=1000, blank=True)

    OUTCOME_FIELDS = (
        "last_success",
        "last_error",
        "last_error_at",
        "api_calls",
        "floor_calls",
        "queries",
        "dropped_values",
        "dropped_note",
    )

    def __str__(self) -> str:
        return f"EBS collection in {self.region}"

    @classmethod
    def claim_due(cls, now: datetime) -> list[int]:
        """Due collections, each claimed by compare-and-set so one tick queues it."""
        interval = timedelta(minutes=settings.VIGIL_EBS_INTERVAL_MINUTES)
        shown = cls.objects.filter(region__in=Region.objects.shown())
        return leases.claim_due(shown, now, interval)


class VolumeMetrics(models.Model):
    """The wide row: one nullable column per ``metrics.VolumeSample`` value field."""

    read_ops = models.FloatField(null=True)
    write_ops = models.FloatField(null=True)
    read_bytes = models.FloatField(null=True)
    write_bytes = models.FloatField(null=True)
    read_time = models.FloatField(null=True)
    write_time = models.FloatField(null=True)
    idle_time = models.FloatField(null=True)
    queue_length = models.FloatField(null=True)
    burst_balance = models.FloatField(null=True)
    throughput_pct = models.FloatField(null=True)
    consumed_ops = models.FloatField(null=True)
    stalled = models.FloatField(null=True)
    iops_exceeded = models.FloatField(null=True)
    throughput_exceeded = models.FloatField(null=True)

    class Meta:
        abstract = True


class VolumeMinute(VolumeMetrics):
    volume = models.ForeignKey(Volume, models.CASCADE, related_name="minutes")
    ts = models.DateTimeField("minute (UTC)")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["volume", "ts"], name="ebs_minute_unique")]
        indexes = [models.Index(fields=["ts"], name="ebs_minute_ts")]

    def __str__(self) -> str:
        return f"{self.volume_id} {self.ts:%Y-%m-%d %H:%M}"


class InstanceMinute(models.Model):
    instance = models.ForeignKey(Instance, models.CASCADE, related_name="minutes")
    ts = models.DateTimeField("minute (UTC)")
    io_balance = models.FloatField(null=True)
    byte_balance = models.FloatField(null=True)
    iops_exceeded = models.FloatField(null=True)
    throughput_exceeded = models.FloatField(null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["instance", "ts"], name="ebs_instance_minute_unique")
        ]
        indexes = [models.Index(fields=["ts"], name="ebs_instance_minute_ts")]

    def __str__(self) -> str:
        return f"{self.instance_id} {self.ts:%Y-%m-%d %H:%M}"


class HostLink(models.Model):
    """Names the EC2 instance of a Galera node, a RAID host, or one of a RAID host's failure
    domains (a storage server), where Vigil cannot match it by private address or Name tag."""

    galera_node = models.ForeignKey(
        "galera.Node", models.CASCADE, null=True, blank=True, related_name="+"
    )
    raid_host = models.ForeignKey(
        "raid.Host", models.CASCADE, null=True, blank=True, related_name="+"
    )
    domain = models.CharField(
        max_length=200, blank=True, help_text="A failure domain of the RAID host; empty: the host."
    )
    instance_id = models.CharField("EC2 instance id", max_length=64)

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["galera_node"],
                condition=models.Q(galera_node__isnull=False),
                name="ebs_link_one_per_node",
            ),
            models.UniqueConstraint(
                fields=["raid_host", "domain"],
                condition=models.Q(raid_host__isnull=False),
                name="ebs_link_one_per_domain",
            ),
        ]

    def __str__(self) -> str:
        what = self.galera_node or (
            f"{self.raid_host} {self.domain}".strip() if self.raid_host else "?"
        )
        return f"{what} → {self.instance_id}"

    def clean(self) -> None:
        if (self.galera_node_id is None) == (self.raid_host_id is None):
            raise ValidationError("Name a Galera node or a RAID host (with a domain or not).")
        if self.galera_node_id is not None and self.domain:
            raise ValidationError({"domain": "Only a RAID host has failure domains."})
        if not self.instance_id.startswith("i-") or not self.instance_id[2:].isalnum():
            raise ValidationError({"instance_id": "An EC2 instance id, i-0123456789abcdef0."})


assert tuple(f.name for f in VolumeMetrics._meta.local_fields) == VOLUME_FIELDS

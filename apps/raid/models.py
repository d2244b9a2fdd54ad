"""Hosts with md-RAID arrays, their arrays (subjects with a status) and the arrays' members.

A host is collected over SSH (Vigil pulls ``/proc/mdstat`` and ``mdadm --detail``) or pushes
its report to the API with a host-scoped token. The history of an array is its
``alerts.Transition`` rows; the host keeps the latest raw texts for its page.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.urls import reverse
from django.utils import timezone

from apps.accounts.audit import track
from apps.alerts.models import Transition
from apps.lib import leases, outbound
from apps.lib.keep import KeepsHistory
from apps.lib.pushtoken import PushTokenHolder
from apps.lib.status import Status, worst
from apps.regions.models import Region, Subject

from .domains import validate_rules

if TYPE_CHECKING:
    from .report import MemberFacts

TOKEN_PREFIX = "vgh_"
SSH_LEASE = timedelta(minutes=6)  # longer than collect_host may run (tasks.py)


class Host(KeepsHistory, PushTokenHolder):
    """A machine with md arrays, in an AWS region or a named site."""

    token_prefix = TOKEN_PREFIX

    class Collection(models.TextChoices):
        SSH = "ssh", "SSH pull"
        PUSH = "push", "Push to the API"

    name = models.CharField(
        max_length=100,
        unique=True,
        validators=[
            RegexValidator(
                r"^[A-Za-z0-9][A-Za-z0-9._-]*$", "Letters, digits, dots, dashes, underscores"
            )
        ],
        help_text="Unique; shown on the pages. The push URL is /api/raid/hosts/<id>/report.",
    )
    region = models.ForeignKey(
        Region,
        models.CASCADE,
        related_name="raid_hosts",
        help_text="An AWS region, or a site for hosts outside AWS.",
    )
    collection = models.CharField(
        max_length=10, choices=Collection.choices, default=Collection.PUSH
    )
    ssh_address = models.CharField(
        "SSH address", max_length=255, blank=True, validators=[outbound.validate_host]
    )
    ssh_port = models.PositiveIntegerField(
        "SSH port", default=22, validators=[MinValueValidator(1), MaxValueValidator(65535)]
    )
    ssh_user = models.CharField("SSH user", max_length=64, default="vigil")
    known_hosts = models.TextField(
        blank=True,
        help_text="The host's key as a known_hosts line (ssh-keyscan -p PORT ADDRESS), or just "
        "'ssh-ed25519 AAAA…'. Empty: the file in VIGIL_RAID_SSH_KNOWN_HOSTS is used. "
        "Host keys are always verified.",
    )
    domain_rules = models.JSONField(
        "failure-domain rules",
        default=dict,
        blank=True,
        help_text="Member device patterns (shell-style, fnmatch) -> failure domain, e.g. "
        '{"sd[b-f]": "storage-a", "sd[g-k]": "storage-b"}. An exact name wins, then the longest pattern; '
        "partitions also match their disk's pattern; unmatched devices are their own domain.",
    )
    domain_noun = models.CharField(
        max_length=50,
        default="failure domain",
        help_text="What a domain is called in sentences, e.g. 'storage server'.",
    )
    interval_s = models.PositiveIntegerField(
        "interval (s)",
        default=300,
        validators=[MinValueValidator(30)],
        help_text="SSH hosts: how often to collect.",
    )
    enabled = models.BooleanField(default=True)
    is_demo = models.BooleanField(default=False, editable=False)
    next_due = models.DateTimeField(default=timezone.now, editable=False)
    last_report = models.DateTimeField(null=True, blank=True, editable=False)
    last_error = models.TextField(blank=True, editable=False)
    last_error_at = models.DateTimeField(null=True, blank=True, editable=False)
    mdstat_text = models.TextField(blank=True, editable=False)
    details_text = models.JSONField(default=dict, blank=True, editable=False)
    created = models.DateTimeField(default=timezone.now, editable=False)
    lease_until = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["name"]
        indexes = [models.Index(fields=["collection", "enabled", "next_due"])]

    disable_hint = "turn it off (enabled: false)"

    def __str__(self) -> str:
        return self.name

    def deletion_blockers(self) -> list[str]:
        from django.contrib.contenttypes.models import ContentType

        arrays = self.arrays.count()
        changes = Transition.objects.filter(
            content_type=ContentType.objects.get_for_model(Array),
            object_id__in=self.arrays.values("pk"),
        ).count()
        return [
            *([f"{arrays} arrays"] if arrays else []),
            *([f"{changes} status changes"] if changes else []),
        ]

    def clean(self) -> None:
        try:
            self.domain_rules = validate_rules(self.domain_rules)
        except ValueError as exc:
            raise ValidationError({"domain_rules": str(exc)}) from exc
        if self.collection == self.Collection.SSH and not self.ssh_address:
            raise ValidationError({"ssh_address": "An SSH host needs an address."})

    # --- collection -----------------------------------------------------------------------

    @property
    def stale_after(self) -> timedelta:
        """No report for this long makes the host's arrays unknown."""
        threshold = timedelta(minutes=settings.VIGIL_RAID_STALE_MINUTES)
        if self.collection == self.Collection.SSH:
            threshold = max(threshold, timedelta(seconds=3 * self.interval_s))
        return threshold

    @classmethod
    def claim_due(cls, now: datetime) -> list[int]:
        """SSH hosts that are due, each claimed by compare-and-set on ``next_due``."""
        due = cls.objects.filter(
            collection=cls.Collection.SSH, enabled=True, region__in=Region.objects.shown()
        )
        return leases.claim_due(due, now)

    def collection_failed(self, message: str) -> None:
        """Keep the error for the host page; the arrays keep their data until they go stale."""
        now = timezone.now()
        Host.objects.filter(pk=self.pk).update(last_error=message[:2000], last_error_at=now)
        self.last_error, self.last_error_at = message[:2000], now

    @property
    def status(self) -> Status:
        """The worst status of the host's arrays; unknown when it has none yet."""
        return worst(a.status for a in self.arrays.all() if a.present) or Status.UNKNOWN


class Array(Subject):
    """One md device of a host, with the figures of its last report."""

    concern = "raid"

    host = models.ForeignKey(Host, models.CASCADE, related_name="arrays")
    name = models.CharField(max_length=64)
    parent = models.ForeignKey(
        "self", models.SET_NULL, null=True, blank=True, related_name="children"
    )
    position = models.PositiveIntegerField(default=0)
    present = models.BooleanField(
        default=True, help_text="False once the array is gone from /proc/mdstat."
    )
    level = models.CharField(max_length=20, blank=True)
    state = models.CharField(
        max_length=20, blank=True, help_text="active, inactive or broken (apps/raid/kernel.py)."
    )
    array_state = models.CharField(
        max_length=20, blank=True, help_text="/sys/block/mdX/md/array_state, when collected."
    )
    read_only = models.CharField(max_length=20, blank=True)
    raid_disks = models.PositiveIntegerField(null=True, blank=True)
    active_disks = models.PositiveIntegerField(null=True, blank=True)
    size_kib = models.PositiveBigIntegerField("size (KiB)", null=True, blank=True)
    disk_status = models.CharField(max_length=300, blank=True, help_text="The [UU_] string.")
    sync_action = models.CharField(
        max_length=20, blank=True, help_text="A resync that sync_action calls a repair is 'repair'."
    )
    sync_state = models.CharField(max_length=20, blank=True)
    sync_percent = models.FloatField(null=True, blank=True)
    speed_kib_per_sec = models.PositiveBigIntegerField("speed (KiB/s)", null=True, blank=True)
    eta_minutes = models.FloatField("ETA (min)", null=True, blank=True)
    stalled = models.BooleanField(null=True, blank=True)
    headroom = models.PositiveIntegerField(
        null=True, blank=True, help_text="More disk failures it survives, worst case."
    )
    headroom_text = models.CharField(max_length=500, blank=True)
    domain_headroom = models.PositiveIntegerField(
        null=True, blank=True, help_text="Failure domains that may all fail, worst case."
    )
    domain_headroom_text = models.CharField(max_length=1000, blank=True)
    # scrubs (apps/raid/scrub.py): sysfs at the last reading, and what Vigil saw over time
    sysfs_sync_action = models.CharField(
        max_length=20, blank=True, help_text="/sys/block/mdX/md/sync_action at the last reading."
    )
    last_sync_action = models.CharField(
        max_length=20, blank=True, help_text="/sys/block/mdX/md/last_sync_action."
    )
    mismatch_cnt = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="Sectors the last check found out of step."
    )
    check_ended = models.DateTimeField(
        null=True, blank=True, help_text="When Vigil saw the last check or repair end."
    )
    check_action = models.CharField(max_length=20, blank=True)
    checks_watched_since = models.DateTimeField(
        null=True, blank=True, help_text="Vigil has read its sync_action since."
    )
    scrub_text = models.CharField(max_length=300, blank=True)
    advice = models.JSONField(
        default=list, blank=True, help_text="What to replace, where, and the mdadm commands."
    )
    last_seen = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["host", "position", "name"]
        constraints = [
            models.UniqueConstraint(fields=["host", "name"], name="raid_array_unique_per_host")
        ]

    def __str__(self) -> str:
        return f"{self.host.name}:{self.name}"

    def get_absolute_url(self) -> str:
        """The host's page, at this array."""
        return reverse("raid:host_detail", args=[self.host_id]) + f"#array-{self.pk}"


class Disk(models.Model):
    """A disk under a host's arrays, known by its WWN or serial across renames (sdc -> sdd)."""

    host = models.ForeignKey(Host, models.CASCADE, related_name="disks")
    key = models.CharField(
        max_length=200, help_text="wwn:…, serial:model:serial, by-id:… or dev:NAME (unstable)."
    )
    device = models.CharField(max_length=100, help_text="Its kernel name at the last report.")
    members = models.JSONField(default=list, blank=True, help_text="md members on it (sdc1).")
    present = models.BooleanField(default=True)
    model = models.CharField(max_length=100, blank=True)
    serial = models.CharField(max_length=100, blank=True)
    wwn = models.CharField(max_length=100, blank=True)
    firmware = models.CharField(max_length=100, blank=True)
    protocol = models.CharField(max_length=20, blank=True)
    device_type = models.CharField(max_length=40, blank=True)
    capacity_bytes = models.PositiveBigIntegerField(null=True, blank=True)
    by_id = models.JSONField(default=list, blank=True)
    by_path = models.JSONField(default=list, blank=True)
    iscsi_portal = models.CharField(max_length=100, blank=True)
    iscsi_target = models.CharField(max_length=240, blank=True)
    iscsi_lun = models.PositiveBigIntegerField(null=True, blank=True)
    domain = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=10, default=Status.UNKNOWN.value)
    failing = models.BooleanField(default=False)
    summary = models.CharField(max_length=500, blank=True)
    smart_passed = models.BooleanField(null=True, blank=True)
    reallocated_sectors = models.PositiveBigIntegerField(null=True, blank=True)
    pending_sectors = models.PositiveBigIntegerField(null=True, blank=True)
    offline_uncorrectable = models.PositiveBigIntegerField(null=True, blank=True)
    grown_defects = models.PositiveBigIntegerField(null=True, blank=True)
    uncorrected_errors = models.PositiveBigIntegerField(null=True, blank=True)
    media_errors = models.PositiveBigIntegerField(null=True, blank=True)
    percentage_used = models.PositiveBigIntegerField(null=True, blank=True)
    temperature_c = models.PositiveIntegerField(null=True, blank=True)
    power_on_hours = models.PositiveBigIntegerField(null=True, blank=True)
    smart_text = models.TextField(blank=True, help_text="smartctl's last output, as sent.")
    first_seen = models.DateTimeField(default=timezone.now)
    last_read = models.DateTimeField(null=True, blank=True)
    kept_at = models.DateTimeField(null=True, blank=True, help_text="Its last DiskReading.")
    gone_since = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When a report first no longer had it (empty while present); a gone disk "
        "expires VIGIL_RAID_GONE_ARRAY_RETENTION_DAYS after it.",
    )

    class Meta:
        ordering = ["host", "device"]
        constraints = [models.UniqueConstraint(fields=["host", "key"], name="raid_disk_unique")]

    def __str__(self) -> str:
        return f"{self.host.name}:{self.device}"

    @property
    def status_enum(self) -> Status:
        return Status(self.status)


class DiskReading(models.Model):
    """A disk's SMART counters at a time: kept when they change, and at least hourly."""

    disk = models.ForeignKey(Disk, models.CASCADE, related_name="readings")
    read_at = models.DateTimeField()
    status = models.CharField(max_length=10)
    smart_passed = models.BooleanField(null=True, blank=True)
    reallocated_sectors = models.PositiveBigIntegerField(null=True, blank=True)
    pending_sectors = models.PositiveBigIntegerField(null=True, blank=True)
    offline_uncorrectable = models.PositiveBigIntegerField(null=True, blank=True)
    grown_defects = models.PositiveBigIntegerField(null=True, blank=True)
    uncorrected_errors = models.PositiveBigIntegerField(null=True, blank=True)
    media_errors = models.PositiveBigIntegerField(null=True, blank=True)
    percentage_used = models.PositiveBigIntegerField(null=True, blank=True)
    temperature_c = models.PositiveIntegerField(null=True, blank=True)
    power_on_hours = models.PositiveBigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["disk", "-read_at"]
        indexes = [models.Index(fields=["disk", "read_at"]), models.Index(fields=["read_at"])]

    def __str__(self) -> str:
        return f"{self.disk} at {self.read_at:%Y-%m-%d %H:%M}"


#: The SMART counters a disk row and its readings share (``DiskReading`` keeps them over time).
COUNTERS = (
    "smart_passed",
    "reallocated_sectors",
    "pending_sectors",
    "offline_uncorrectable",
    "grown_defects",
    "uncorrected_errors",
    "media_errors",
    "percentage_used",
    "temperature_c",
    "power_on_hours",
)


class Member(models.Model):
    """A member device of an array, as the last report listed it."""

    array = models.ForeignKey(Array, models.CASCADE, related_name="members")
    position = models.PositiveIntegerField(default=0)
    device = models.CharField(max_length=100)
    role = models.PositiveIntegerField(help_text="The number in brackets in /proc/mdstat.")
    slot = models.PositiveIntegerField(
        null=True, blank=True, help_text="RaidDevice from mdadm --detail."
    )
    flags = models.CharField(max_length=10, blank=True, help_text="F faulty, S spare, …")
    state = models.CharField(max_length=100, blank=True)
    domain = models.CharField(max_length=200, blank=True)
    is_array = models.BooleanField(default=False)
    disk = models.ForeignKey(
        Disk, models.SET_NULL, null=True, blank=True, related_name="memberships"
    )

    class Meta:
        ordering = ["array", "position"]

    def __str__(self) -> str:
        return f"{self.device} in {self.array}"

    @classmethod
    def of(cls, array: Array, position: int, facts: MemberFacts) -> Member:
        """The row for one member as a report saw it (unsaved)."""
        return cls(
            array=array,
            position=position,
            device=facts.device,
            role=facts.role,
            slot=facts.slot,
            flags=facts.flags,
            state=facts.state,
            domain=facts.domain,
            is_array=facts.is_array,
        )


track(
    Host,
    exclude=[
        "next_due",
        "last_report",
        "last_error",
        "last_error_at",
        "mdstat_text",
        "details_text",
        "lease_until",
    ],
    secrets=["token_hash"],
)

"""md arrays and their disks for ``/metrics``: each one's last report, one query each.

``vigil_raid_degraded`` is the kernel's count (fewer members in sync than the array has
slots); the headroom gauges are what the whole stack may still lose, worst case. The disk
families carry the SMART health (``vigil_raid_disk_failing``, ``vigil_raid_disk_smart_readable``)
and counters of every present disk under the arrays, labelled with its serial so a renamed
disk keeps its series. A figure the last report did not give is left out, never exported as 0.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import QuerySet
from prometheus_client.core import Metric

from apps.lib.status import Status
from apps.prometheus.families import Gauges, SubjectStatuses, subject_rows

from .models import Disk

LABELS = ("region", "account", "host", "array")
DISK_LABELS = ("region", "account", "host", "device", "serial", "model", "domain")

# (metric, Array field, scale to base units, help)
FIGURES = (
    ("vigil_raid_disks", "raid_disks", 1.0, "Member slots of the array ([n/m]: n)."),
    ("vigil_raid_active_disks", "active_disks", 1.0, "Members in sync ([n/m]: m)."),
    (
        "vigil_raid_headroom_disks",
        "headroom",
        1.0,
        "More disk failures the array (with the arrays below it) survives, worst case.",
    ),
    (
        "vigil_raid_headroom_domains",
        "domain_headroom",
        1.0,
        "More failure domains (per the host's rules) that may all fail, worst case.",
    ),
    (
        "vigil_raid_sync_progress_percent",
        "sync_percent",
        1.0,
        "Progress of the recovery, resync, reshape or check that runs.",
    ),
    (
        "vigil_raid_sync_speed_bytes_per_second",
        "speed_kib_per_sec",
        1024.0,
        "Speed of the running recovery, resync, reshape or check.",
    ),
    (
        "vigil_raid_sync_eta_seconds",
        "eta_minutes",
        60.0,
        "Time the kernel expects the running recovery, resync, reshape or check to take.",
    ),
    (
        "vigil_raid_mismatch_sectors",
        "mismatch_cnt",
        1.0,
        "Sectors the last check found out of step (sysfs mismatch_cnt).",
    ),
)

# (metric, Disk field, scale, help): the SMART counters of each disk
DISK_FIGURES = (
    ("vigil_raid_disk_reallocated_sectors", "reallocated_sectors", 1.0, "ATA attribute 5 (raw)."),
    ("vigil_raid_disk_pending_sectors", "pending_sectors", 1.0, "ATA attribute 197 (raw)."),
    (
        "vigil_raid_disk_offline_uncorrectable_sectors",
        "offline_uncorrectable",
        1.0,
        "ATA attribute 198 (raw).",
    ),
    ("vigil_raid_disk_grown_defects", "grown_defects", 1.0, "SCSI grown defect list."),
    (
        "vigil_raid_disk_uncorrected_errors",
        "uncorrected_errors",
        1.0,
        "SCSI uncorrected read, write and verify errors.",
    ),
    ("vigil_raid_disk_media_errors", "media_errors", 1.0, "NVMe media and data integrity errors."),
    ("vigil_raid_disk_percentage_used", "percentage_used", 1.0, "NVMe rated life used, percent."),
    ("vigil_raid_disk_temperature_celsius", "temperature_c", 1.0, "Current temperature."),
    ("vigil_raid_disk_power_on_seconds", "power_on_hours", 3600.0, "Power-on time."),
)


def metrics(subjects: QuerySet, statuses: SubjectStatuses) -> Iterator[Metric]:
    gauges = Gauges(LABELS)
    gauges.declare(
        "vigil_raid_degraded", "1 when fewer members are in sync than the array has slots."
    )
    for name, _, _, documentation in FIGURES:
        gauges.declare(name, documentation)
    gauges.declare(
        "vigil_raid_last_check_end_timestamp_seconds",
        "When Vigil saw the array's last check or repair end (Unix time).",
    )
    fields = (field for _, field, _, _ in FIGURES)
    for region, account, row in subject_rows(
        subjects, "host__name", "name", "status", "check_ended", *fields
    ):
        labels = (region, account, row["host__name"], row["name"])
        statuses.add("raid", region, account, f"{row['host__name']}:{row['name']}", row["status"])
        slots, in_sync = row["raid_disks"], row["active_disks"]
        if slots is not None and in_sync is not None:
            gauges.add("vigil_raid_degraded", labels, in_sync < slots)
        for metric, field, scale, _ in FIGURES:
            gauges.add(metric, labels, row[field], scale)
        if row["check_ended"] is not None:
            ended = row["check_ended"].timestamp()
            gauges.add("vigil_raid_last_check_end_timestamp_seconds", labels, ended)
    yield from gauges
    yield from disk_metrics(subjects)


def disk_metrics(arrays: QuerySet) -> Iterator[Metric]:
    """The present disks of the hosts whose arrays are exported."""
    gauges = Gauges(DISK_LABELS)
    gauges.declare(
        "vigil_raid_disk_failing", "1 when SMART predicts or reports the disk's failure."
    )
    gauges.declare(
        "vigil_raid_disk_smart_readable",
        "1 when SMART could be read; 0 for a disk that hides it (USB bridge, virtual disk, LUN).",
    )
    gauges.declare("vigil_raid_disk_smart_passed", "SMART's overall self-assessment (1 passed).")
    for name, _, _, documentation in DISK_FIGURES:
        gauges.declare(name, documentation)
    disks = Disk.objects.filter(present=True, host__arrays__in=arrays).distinct().order_by()
    fields = ("failing", "status", "smart_passed", *(field for _, field, _, _ in DISK_FIGURES))
    names = ("host__region__code", "host__region__account__name", "host__name", "device")
    rows = disks.values(*names, "serial", "model", "domain", *fields)
    for row in rows.iterator(chunk_size=2000):
        region, account = row["host__region__code"], row["host__region__account__name"] or ""
        labels = (region, account, row["host__name"], row["device"], row["serial"], row["model"])
        labels += (row["domain"],)
        readable = row["status"] != Status.UNKNOWN.value
        gauges.add("vigil_raid_disk_smart_readable", labels, readable)
        if readable:
            gauges.add("vigil_raid_disk_failing", labels, row["failing"])
        gauges.add("vigil_raid_disk_smart_passed", labels, row["smart_passed"])
        for metric, field, scale, _ in DISK_FIGURES:
            gauges.add(metric, labels, row[field], scale)
    yield from gauges

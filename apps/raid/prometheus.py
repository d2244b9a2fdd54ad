"""md arrays for ``/metrics``: the figures of each array's last report, in one query.

``vigil_raid_degraded`` is the kernel's count (fewer members in sync than the array has
slots); the headroom gauges are what the whole stack may still lose, worst case. A figure
the last report did not give is left out, never exported as 0.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import QuerySet
from prometheus_client.core import Metric

from apps.prometheus.families import Gauges, SubjectStatuses, subject_rows

LABELS = ("region", "account", "host", "array")

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
)


def metrics(subjects: QuerySet, statuses: SubjectStatuses) -> Iterator[Metric]:
    gauges = Gauges(LABELS)
    gauges.declare(
        "vigil_raid_degraded", "1 when fewer members are in sync than the array has slots."
    )
    for name, _, _, documentation in FIGURES:
        gauges.declare(name, documentation)
    fields = (field for _, field, _, _ in FIGURES)
    for region, account, row in subject_rows(subjects, "host__name", "name", "status", *fields):
        labels = (region, account, row["host__name"], row["name"])
        statuses.add("raid", region, account, f"{row['host__name']}:{row['name']}", row["status"])
        slots, in_sync = row["raid_disks"], row["active_disks"]
        if slots is not None and in_sync is not None:
            gauges.add("vigil_raid_degraded", labels, in_sync < slots)
        for metric, field, scale, _ in FIGURES:
            gauges.add(metric, labels, row[field], scale)
    yield from gauges

"""EBS volumes for ``/metrics``: each one's stored current figures, in one query.

Base units (seconds, bytes per second, percent as 0-100 as CloudWatch gives it); a figure the
collection did not have is left out, never exported as 0.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from django.db.models import QuerySet
from prometheus_client.core import Metric

from apps.prometheus.families import Gauges, SubjectStatuses

MIB = 1024 * 1024
LABELS = ("region", "account", "volume_id", "name", "volume_type", "instance_id")

# (metric, figures key, scale to base units, help)
FIGURES = (
    ("vigil_ebs_iops", "iops", 1.0, "Read and write operations per second, last minute."),
    ("vigil_ebs_throughput_bytes_per_second", "mibps", MIB, "Read and write bytes per second."),
    ("vigil_ebs_iops_limit", "iops_limit", 1.0,
     "The IOPS the volume may use: provisioned, or gp2's burst (3,000) or baseline."),
    ("vigil_ebs_read_latency_seconds", "read_ms", 0.001, "Average time per read, last minute."),
    ("vigil_ebs_write_latency_seconds", "write_ms", 0.001,
     "Average time per write, last minute."),
    ("vigil_ebs_queue_length", "queue_length", 1.0, "VolumeQueueLength (Average)."),
    ("vigil_ebs_burst_balance_percent", "burst_balance_pct", 1.0,
     "BurstBalance (gp2, st1, sc1): percent of the burst bucket left."),
    ("vigil_ebs_burst_exhaustion_seconds", "hours_to_exhaustion", 3600.0,
     "Time until BurstBalance reaches 0 at the fitted drain rate: 0 when out, absent when "
     "not draining."),
    ("vigil_ebs_instance_io_balance_percent", "instance_io_balance_pct", 1.0,
     "EBSIOBalance% of the instance the volume is attached to."),
    ("vigil_ebs_instance_byte_balance_percent", "instance_byte_balance_pct", 1.0,
     "EBSByteBalance% of the instance the volume is attached to."),
    ("vigil_ebs_instance_io_exhaustion_seconds", "instance_io_hours_to_exhaustion", 3600.0,
     "Time until the instance's EBS I/O burst bucket empties: 0 when out, absent when not "
     "draining."),
)  # fmt: skip


def metrics(subjects: QuerySet, statuses: SubjectStatuses) -> Iterator[Metric]:
    gauges = Gauges(LABELS)
    for name, _, _, documentation in FIGURES:
        gauges.declare(name, documentation)
    gauges.declare("vigil_ebs_stalled", "1 when VolumeStalledIOCheck failed in the last minutes.")
    gauges.declare(
        "vigil_ebs_last_data_timestamp_seconds",
        "When the latest minute with CloudWatch data began (Unix time).",
    )
    rows = subjects.values_list(
        "region__code",
        "region__account__name",
        "volume_id",
        "name",
        "volume_type",
        "instance__instance_id",
        "status",
        "figures",
    ).order_by()
    for region, account, volume_id, name, kind, instance, status, figures in rows.iterator(
        chunk_size=2000
    ):
        labels = (region, account or "", volume_id, name, kind, instance or "")
        statuses.add("ebs", region, account or "", volume_id, status)
        figures = figures or {}
        for metric, key, scale, _ in FIGURES:
            gauges.add(metric, labels, figures.get(key), scale)
        if "stalled" in figures:
            gauges.add("vigil_ebs_stalled", labels, 1.0 if figures["stalled"] else 0.0)
        if last := figures.get("last_data_at"):
            gauges.add(
                "vigil_ebs_last_data_timestamp_seconds",
                labels,
                datetime.fromisoformat(last).timestamp(),
            )
    yield from gauges

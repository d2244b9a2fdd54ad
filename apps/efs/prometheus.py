"""EFS file systems for ``/metrics``: each one's stored current figures, in one query.

The figures are those the last collection judged (``FileSystem.figures``, keys suffixed with
their unit); Prometheus gets them in base units (bytes, seconds; money in US dollars a month).
A figure the collection did not have is left out, never exported as 0. The throughput-mode
comparison (``pricing``, refreshed every few hours) adds a ``mode`` label.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from django.db.models import QuerySet
from django.utils import timezone
from prometheus_client.core import Metric

from apps.prometheus.families import Gauges, SubjectStatuses

from . import client_history

MIB = 1024 * 1024
LABELS = ("region", "account", "filesystem_id", "name")
MODES = ("bursting", "elastic", "provisioned")

# (metric, figures key, scale to base units, help)
FIGURES = (
    (
        "vigil_efs_io_limit_percent",
        "io_limit_pct",
        1.0,
        "PercentIOLimit: share of the General Purpose I/O operations limit in use.",
    ),
    (
        "vigil_efs_throughput_utilisation_percent",
        "throughput_utilisation_pct",
        1.0,
        "Throughput as a share of the throughput permitted now.",
    ),
    (
        "vigil_efs_permitted_throughput_bytes_per_second",
        "permitted_mibps",
        MIB,
        "PermittedThroughput: the throughput the file system may use now.",
    ),
    (
        "vigil_efs_baseline_throughput_bytes_per_second",
        "baseline_mibps",
        MIB,
        "Bursting mode: the baseline throughput its Standard storage size earns.",
    ),
    (
        "vigil_efs_burst_credit_balance_bytes",
        "credit_balance_bytes",
        1.0,
        "BurstCreditBalance (bursting mode).",
    ),
    (
        "vigil_efs_burst_credit_drain_bytes_per_second",
        "credit_drain_mibps",
        MIB,
        "Net rate at which burst credits are spent, fitted over the forecast window.",
    ),
    (
        "vigil_efs_burst_credit_exhaustion_seconds",
        "hours_to_exhaustion",
        3600.0,
        "Time until the burst credits run out at the fitted drain rate: 0 when exhausted, "
        "absent when they are not draining.",
    ),
)


def _families() -> tuple[Gauges, Gauges, Gauges]:
    """The families, declared and empty: by file system, by file system and throughput mode,
    by file system and its clients' state."""
    gauges = Gauges(LABELS)
    for name, _, _, documentation in FIGURES:
        gauges.declare(name, documentation)
    gauges.declare(
        "vigil_efs_last_data_timestamp_seconds",
        "When the latest minute with CloudWatch data began (Unix time).",
    )
    gauges.declare(
        "vigil_efs_monthly_cost_dollars",
        "What the file system costs a month in its throughput mode now, at last 30 days' use.",
    )
    gauges.declare(
        "vigil_efs_cheapest_mode_saving_dollars",
        "What the cheapest throughput mode that carries the workload saves a month against now.",
    )
    by_mode = Gauges((*LABELS, "mode"))
    by_mode.declare(
        "vigil_efs_mode_monthly_cost_dollars",
        "What the file system would cost a month in each throughput mode (storage included).",
    )
    by_mode.declare(
        "vigil_efs_mode_fits",
        "1 when the throughput mode would have carried the last 30 days' p95 and peak "
        "without throttling, 0 when not.",
    )
    by_mode.declare(
        "vigil_efs_cheapest_mode",
        "1 for the cheapest throughput mode that carries the workload (one sample a file system).",
    )
    by_state = Gauges((*LABELS, "state"))
    by_state.declare(
        "vigil_efs_nfs_clients",
        "NFS clients that push their mountstats (agents/vigil-nfs-push) with a mount of the file "
        "system, by whether they still report (state=reporting) or stopped (state=stale).",
    )
    return gauges, by_mode, by_state


def metrics(subjects: QuerySet, statuses: SubjectStatuses) -> Iterator[Metric]:
    gauges, by_mode, by_state = _families()
    clients = client_history.client_counts(subjects, timezone.now())
    rows = subjects.values_list(
        "pk", "region__code", "region__account__name", "filesystem_id", "name", "status", "figures"
    ).order_by()
    for pk, region, account, filesystem_id, name, status, figures in rows.iterator(chunk_size=2000):
        labels = (region, account or "", filesystem_id, name)
        if pk in clients:
            reporting, stale = clients[pk]
            by_state.add("vigil_efs_nfs_clients", (*labels, "reporting"), reporting)
            by_state.add("vigil_efs_nfs_clients", (*labels, "stale"), stale)
        statuses.add("efs", region, account or "", filesystem_id, status)
        figures = figures or {}
        for metric, key, scale, _ in FIGURES:
            gauges.add(metric, labels, figures.get(key), scale)
        gauges.add("vigil_efs_monthly_cost_dollars", labels, figures.get("cost_current_usd"))
        gauges.add("vigil_efs_cheapest_mode_saving_dollars", labels, figures.get("cost_saving_usd"))
        for mode in MODES:
            with_mode = (*labels, mode)
            by_mode.add(
                "vigil_efs_mode_monthly_cost_dollars", with_mode, figures.get(f"cost_{mode}_usd")
            )
            if figures.get(f"cost_{mode}_usd") is not None:
                by_mode.add("vigil_efs_mode_fits", with_mode, figures.get(f"cost_{mode}_fits"))
        if (best := figures.get("cost_best_mode")) in MODES:
            by_mode.add("vigil_efs_cheapest_mode", (*labels, best), 1)
        if last := figures.get("last_data_at"):
            gauges.add(
                "vigil_efs_last_data_timestamp_seconds",
                labels,
                datetime.fromisoformat(last).timestamp(),
            )
    yield from gauges
    yield from by_mode
    yield from by_state

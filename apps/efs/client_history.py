"""Which client: each NFS client's share of a file system's reads, writes and metadata operations
over a range, read as aggregates in SQL (one ``GROUP BY`` over the pushes' increases, one sum of
CloudWatch's minutes), and set beside CloudWatch's totals on the same footing (docs/architecture.md,
"EFS from the clients' side")."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count, Max, Sum

from . import clients, pricing
from .history import minute_retention_start
from .models import FileSystem, MetricHour, MetricMinute, NfsMount, NfsSample

KINDS = ("read", "write", "metadata")
_SUMS = (
    "read_bytes",
    "write_bytes",
    "read_ops",
    "write_ops",
    "metadata_ops",
    "read_rtt_ms",
    "read_execute_ms",
    "write_rtt_ms",
    "write_execute_ms",
    "metadata_rtt_ms",
    "metadata_execute_ms",
    "retrans",
    "timeouts",
)
_CLOUDWATCH = (
    "data_read_bytes",
    "data_read_count",
    "data_write_bytes",
    "data_write_count",
    "metadata_bytes",
    "metadata_count",
    "metered_bytes",
)


@dataclass
class ClientRow:
    client_id: int
    name: str
    totals: dict[str, int]
    last_push: datetime | None
    stale: bool = False
    share: dict[str, float] = field(default_factory=dict)
    per_op: dict[str, dict[str, float | None]] = field(default_factory=dict)
    mounts: list[dict[str, Any]] = field(default_factory=list)
    slow_lookups: list[dict[str, Any]] = field(default_factory=list)
    failed_locks: list[dict[str, Any]] = field(default_factory=list)


def cloudwatch_totals(fs: FileSystem, start: datetime, end: datetime, now: datetime) -> dict:
    """CloudWatch's sums over ``[start, end)``: hours before the minute retention, minutes
    after it (as ``history.load_series`` splits them)."""
    split = minute_retention_start(now)
    sums = {name: Sum(name) for name in _CLOUDWATCH}
    out = dict.fromkeys(_CLOUDWATCH)
    parts = []
    if start < split:
        parts.append(
            MetricHour.objects.filter(filesystem=fs, ts__gte=start, ts__lt=min(end, split))
        )
    if end > split:
        parts.append(
            MetricMinute.objects.filter(filesystem=fs, ts__gte=max(start, split), ts__lt=end)
        )
    for rows in parts:
        for name, value in rows.aggregate(**sums).items():
            if value is not None:
                out[name] = (out[name] or 0) + value
    return out


def _clients_metered(totals: dict[str, float], metering) -> tuple[float, float]:
    """The clients' operations as EFS meters them (MeteredIOBytes: reads at one-third)."""
    discount = metering["read_discount"].value
    r_low, r_high = clients.metered_range(totals["read_ops"], totals["read_bytes"], 0, metering)
    w_low, w_high = clients.metered_range(
        totals["write_ops"], totals["write_bytes"], totals["metadata_ops"], metering
    )
    return r_low / discount + w_low, r_high / discount + w_high


def client_shares(fs: FileSystem, start: datetime, end: datetime, now: datetime) -> dict:
    """Each client's totals and share of the file system's over ``(start, end]``, the top
    client first; the clients' sum against CloudWatch's; stale clients; per-operation times,
    retransmissions and timeouts; mount options against AWS's; slow lookups and failed locks."""
    grouped = (
        NfsSample.objects.filter(filesystem=fs, time__gt=start, time__lte=end)
        .values("client_id", "client__identity", "client__hostname", "client__last_push")
        .annotate(**{name: Sum(name) for name in _SUMS}, pushes=Count("id"))
        .order_by()
    )
    rows = [
        ClientRow(
            g["client_id"],
            g["client__hostname"] or g["client__identity"],
            {name: int(g[name] or 0) for name in _SUMS},
            g["client__last_push"],
        )
        for g in grouped
    ]
    all_totals = {name: sum(r.totals[name] for r in rows) for name in _SUMS}
    stale_after = now - timedelta(minutes=settings.VIGIL_EFS_CLIENT_STALE_MINUTES)
    mounts = list(
        NfsMount.objects.filter(filesystem=fs)
        .select_related("client")
        .order_by("client__identity", "mountpoint")
    )
    by_id = {r.client_id: r for r in rows}
    for mount in mounts:
        if mount.client_id not in by_id:  # mounted, but nothing counted in the range
            row = ClientRow(
                mount.client_id,
                mount.client.hostname or mount.client.identity,
                dict.fromkeys(_SUMS, 0),
                mount.client.last_push,
            )
            rows.append(row)
            by_id[row.client_id] = row
    warn = settings.VIGIL_EFS_CLIENT_LOOKUP_WARN_SECONDS
    for mount in mounts:
        row = by_id[mount.client_id]
        row.mounts.append(
            {
                "mountpoint": mount.mountpoint,
                "server": mount.server,
                "version": mount.version,
                "findings": clients.option_findings(mount.options or {}, mount.version),
                "error": mount.error,
            }
        )
        if not row.slow_lookups and not row.failed_locks:
            row.slow_lookups = [
                lookup
                for lookup in mount.client.lookups or []
                if max(lookup.get("reverse_seconds") or 0, lookup.get("forward_seconds") or 0)
                > warn
            ]
            row.failed_locks = [lock for lock in mount.client.locks or [] if not lock.get("ok")]
    pairs = {
        "read_bytes": "read_bytes",
        "write_bytes": "write_bytes",
        "read_ops": "read_ops",
        "write_ops": "write_ops",
        "metadata_ops": "metadata_ops",
    }
    for row in rows:
        row.stale = row.last_push is None or row.last_push < stale_after
        row.share = {
            key: (row.totals[name] / all_totals[name]) if all_totals[name] else 0.0
            for key, name in pairs.items()
        }
        row.per_op = {
            kind: {
                "ops": row.totals[f"{kind}_ops"],
                "rtt_ms": _per(row.totals[f"{kind}_rtt_ms"], row.totals[f"{kind}_ops"]),
                "execute_ms": _per(row.totals[f"{kind}_execute_ms"], row.totals[f"{kind}_ops"]),
            }
            for kind in KINDS
        }
    rows.sort(key=lambda r: (-(r.totals["read_bytes"] + r.totals["write_bytes"]), -_ops(r), r.name))
    cloudwatch = cloudwatch_totals(fs, start, end, now)
    metering = pricing.metering_table()
    low, high = _clients_metered(all_totals, metering)
    return {
        "rows": rows,
        "totals": all_totals,
        "cloudwatch": cloudwatch,
        "metered_low": low,
        "metered_high": high,
        "stale": [r for r in rows if r.stale],
        "lookup_warn_seconds": warn,
        "data_minimum_kib": metering["data_minimum_bytes"].value / 1024,
        "metadata_minimum_kib": metering["metadata_minimum_bytes"].value / 1024,
        "read_discount": metering["read_discount"].value,
        "last_sample": NfsSample.objects.filter(filesystem=fs).aggregate(t=Max("time"))["t"],
    }


def _ops(row: ClientRow) -> int:
    return sum(row.totals[f"{k}_ops"] for k in KINDS)


def _per(total_ms: int, ops: int) -> float | None:
    return total_ms / ops if ops else None

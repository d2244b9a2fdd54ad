"""Pure derivations over a minute of an EBS volume's (or an instance's) CloudWatch metrics:
IOPS, MiB/s, request size, latency per operation, idle share, as the console computes them
[M1] (``limits``' sources). No Django, no I/O.

A value CloudWatch did not return is ``None`` and stays ``None`` through every derivation: a
gap is never read as zero (docs/architecture.md, "Missing is not zero").
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime

from .limits import INSTANCE_FIELDS, MIB, VOLUME_FIELDS

KIB = 1024


@dataclass(frozen=True)
class VolumeSample:
    """One volume's metrics for one period (a wide row), as CloudWatch returned them."""

    timestamp: datetime
    period_s: int = 60
    read_ops: float | None = None  # VolumeReadOps Sum
    write_ops: float | None = None  # VolumeWriteOps Sum
    read_bytes: float | None = None  # VolumeReadBytes Sum
    write_bytes: float | None = None  # VolumeWriteBytes Sum
    read_time: float | None = None  # VolumeTotalReadTime Sum, seconds
    write_time: float | None = None  # VolumeTotalWriteTime Sum, seconds
    idle_time: float | None = None  # VolumeIdleTime Sum, seconds
    queue_length: float | None = None  # VolumeQueueLength Average
    burst_balance: float | None = None  # BurstBalance Minimum, percent
    throughput_pct: float | None = None  # VolumeThroughputPercentage Average
    consumed_ops: float | None = None  # VolumeConsumedReadWriteOps Sum
    stalled: float | None = None  # VolumeStalledIOCheck Maximum (0 or 1)
    iops_exceeded: float | None = None  # VolumeIOPSExceededCheck Maximum
    throughput_exceeded: float | None = None  # VolumeThroughputExceededCheck Maximum

    def has_data(self) -> bool:
        return any(getattr(self, name) is not None for name in VOLUME_FIELDS)


@dataclass(frozen=True)
class InstanceSample:
    """One instance's EBS bandwidth metrics for one minute (balances every fifth one)."""

    timestamp: datetime
    period_s: int = 60
    io_balance: float | None = None  # EBSIOBalance% Minimum
    byte_balance: float | None = None  # EBSByteBalance% Minimum
    iops_exceeded: float | None = None  # InstanceEBSIOPSExceededCheck Maximum
    throughput_exceeded: float | None = None  # InstanceEBSThroughputExceededCheck Maximum

    def has_data(self) -> bool:
        return any(getattr(self, name) is not None for name in INSTANCE_FIELDS)


assert tuple(f.name for f in fields(VolumeSample))[2:] == VOLUME_FIELDS
assert tuple(f.name for f in fields(InstanceSample))[2:] == INSTANCE_FIELDS


def _sum(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def iops(s: VolumeSample) -> float | None:
    """Read and write operations per second: (ReadOps + WriteOps) Sum / period [M1]."""
    total = _sum(s.read_ops, s.write_ops)
    return None if total is None else total / s.period_s


def mibps(s: VolumeSample) -> float | None:
    """Read and write MiB/s: (ReadBytes + WriteBytes) Sum / 2^20 / period [M1]."""
    total = _sum(s.read_bytes, s.write_bytes)
    return None if total is None else total / MIB / s.period_s


def per_op(amount: float | None, ops: float | None, scale: float = 1.0) -> float | None:
    """``amount`` per operation (``scale``d); None with no operations (nothing to divide)."""
    if amount is None or not ops:
        return None
    return amount / ops * scale


def idle_pct(s: VolumeSample) -> float | None:
    """Share of the minute with nothing submitted: IdleTime Sum / period x 100 [M1]."""
    return None if s.idle_time is None else min(100.0, s.idle_time / s.period_s * 100)


def figure_columns(samples: Sequence[VolumeSample]) -> dict[str, list[float | None]]:
    """The derived figures of ``samples``, column by column (for charts and the API)."""
    return {
        "read_iops": [None if s.read_ops is None else s.read_ops / s.period_s for s in samples],
        "write_iops": [None if s.write_ops is None else s.write_ops / s.period_s for s in samples],
        "read_mibps": [
            None if s.read_bytes is None else s.read_bytes / MIB / s.period_s for s in samples
        ],
        "write_mibps": [
            None if s.write_bytes is None else s.write_bytes / MIB / s.period_s for s in samples
        ],
        "read_kib": [per_op(s.read_bytes, s.read_ops, 1 / KIB) for s in samples],
        "write_kib": [per_op(s.write_bytes, s.write_ops, 1 / KIB) for s in samples],
        "read_ms": [per_op(s.read_time, s.read_ops, 1000.0) for s in samples],
        "write_ms": [per_op(s.write_time, s.write_ops, 1000.0) for s in samples],
        "queue_length": [s.queue_length for s in samples],
        "idle_pct": [idle_pct(s) for s in samples],
        "burst_balance": [s.burst_balance for s in samples],
    }


def percentile(values: Sequence[float], pct: float) -> float:
    """Linear-interpolation percentile (numpy's default) of a non-empty sequence."""
    if not values:
        raise ValueError("percentile of no values")
    if len(values) == 1:
        return float(values[0])
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    whole = int(pct)
    if whole >= 100:
        return float(max(values))
    return cuts[whole - 1] if whole >= 1 else float(min(values))


@dataclass(frozen=True)
class Usage:
    """A volume's demand over some minutes: p95 and peak of its per-minute IOPS and MiB/s."""

    minutes: int
    p95_iops: float
    peak_iops: float
    p95_mibps: float
    peak_mibps: float


def usage(samples: Sequence[VolumeSample]) -> Usage | None:
    """The p95 and peak of the minutes that have both IOPS and MiB/s; None with none."""
    pairs = [(i, m) for s in samples if (i := iops(s)) is not None and (m := mibps(s)) is not None]
    if not pairs:
        return None
    ops = [i for i, _ in pairs]
    mib = [m for _, m in pairs]
    return Usage(len(pairs), percentile(ops, 95), max(ops), percentile(mib, 95), max(mib))

"""A file system's headroom under its limits: the documented ones (``documented.LIMITS``, by
file system type, throughput mode and Region) and the one its measured PercentIOLimit implies.

Pure: no Django, no I/O. What the sources say is in ``documented``; which limits apply to
which file system, and how they add up: ``headroom``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .documented import LIMITS, ModeLimits, Table, mode_limits
from .metrics import MIB, Sample, implied_ops_limit

GIB_PER_S = 1024.0  # MiB/s in a GiB/s

#: Where a headroom's limit comes from: AWS's documentation, or the measured PercentIOLimit.
DOCUMENTED = "documented"
IMPLIED = "implied by PercentIOLimit"


@dataclass(frozen=True)
class Headroom:
    """``used`` of ``limit`` (same ``unit``); ``approx`` when the limit is inferred."""

    key: str
    label: str
    used: float
    limit: float | None
    unit: str
    approx: bool = False

    @property
    def basis(self) -> str:
        """``IMPLIED`` (from the measured PercentIOLimit) or ``DOCUMENTED``."""
        return IMPLIED if self.approx else DOCUMENTED

    @property
    def pct(self) -> float | None:
        return None if not self.limit else 100.0 * self.used / self.limit

    @property
    def text(self) -> str:
        """ "2,880 of ~3,430 ops/s", "120 MiB/s of 1.0 GiB/s", "120 % of 100 %"."""
        used, used_unit = _quantity(self.used, self.unit)
        if self.limit is None:
            return f"{used} {used_unit} ({self.unit_note or 'no documented limit'})"
        limit, limit_unit = _quantity(
            _three_digits(self.limit) if self.approx else self.limit, self.unit
        )
        tilde = "~" if self.approx else ""
        if used_unit == limit_unit:
            return f"{used} of {tilde}{limit} {limit_unit}"
        return f"{used} {used_unit} of {tilde}{limit} {limit_unit}"

    @property
    def unit_note(self) -> str:
        return _NOTES.get(self.key, "")


def headroom(
    sample: Sample | None,
    performance_mode: str,
    throughput_mode: str,
    *,
    file_system_type: str = "regional",
    region: str = "",
    limits: Table = LIMITS,
) -> list[Headroom]:
    """What ``sample`` (the latest minute with operations) uses of the file system's limits
    (their values: ``documented.mode_limits``).

    - General Purpose file systems that report PercentIOLimit: operations against the limit
      the metric implies (``metrics.implied_ops_limit``, "2,880 of ~3,430 ops/s"): measured,
      not documented.
    - Elastic and Max I/O ones (or General Purpose without PercentIOLimit): read and write
      throughput against the documented per-file-system limits of the file system's type
      (Regional or One Zone), throughput mode and Region, and their sum: "your file system
      can achieve a combined 100% of its read and write throughput" [PERF], so 60 % of the
      read limit and 60 % of the write limit are 120 % of the one budget. Operations against
      the documented IOPS, metadata reads counted as reads and metadata writes as writes
      (metadata operations are not writes; when CloudWatch gives no split they are shown on
      their own, without a limit). Max I/O "doesn't have a file system operations limit" (AWS
      re:Post, "What are the differences between General Purpose and Max I/O performance
      modes in Amazon EFS?", https://repost.aws/knowledge-center/linux-efs-performance-modes).
    """
    if sample is None or sample.total_count is None:
        return []
    p = sample.period_s
    ops = sample.total_count / p
    out: list[Headroom] = []
    pct = sample.percent_io_limit
    if performance_mode == "generalPurpose" and pct:
        out.append(_headroom("ops", ops, implied_ops_limit(ops, pct)))
        if throughput_mode != "elastic":
            return out
    documented = mode_limits(limits, file_system_type, throughput_mode, region)
    out += _throughput(sample, documented)
    if not any(h.key == "ops" for h in out):
        out += _operations(sample, documented, max_io=performance_mode != "generalPurpose")
    return out


def _throughput(sample: Sample, limits: ModeLimits) -> list[Headroom]:
    p = sample.period_s
    out = []
    for key, bytes_, limit in (
        ("read_mibps", sample.data_read_bytes, limits.read_mibps),
        ("write_mibps", sample.data_write_bytes, limits.write_mibps),
    ):
        if bytes_ is not None:
            out.append(_headroom(key, bytes_ / MIB / p, limit))
    combined = combined_share_pct(sample, limits)
    if combined is not None:
        out.append(_headroom("combined_pct", combined, 100.0))
    return out


def _operations(sample: Sample, limits: ModeLimits, *, max_io: bool) -> list[Headroom]:
    p = sample.period_s
    split = sample.metadata_read_count is not None or sample.metadata_write_count is not None
    out = []
    if sample.data_read_count is not None:
        reads = sample.data_read_count + (sample.metadata_read_count or 0.0)
        out.append(_headroom("read_iops", reads / p, None if max_io else limits.read_iops))
    if sample.data_write_count is not None:
        writes = sample.data_write_count + (sample.metadata_write_count or 0.0)
        out.append(_headroom("write_iops", writes / p, None if max_io else limits.write_iops))
    if not split and sample.metadata_count is not None:
        out.append(_headroom("metadata_iops", sample.metadata_count / p, None))
    return out


def headroom_figures(items: list[Headroom]) -> dict[str, float | None]:
    """Flat figures for ``FileSystem.figures``: ``headroom_<key>`` and ``..._limit``."""
    out: dict[str, float | None] = {}
    for h in items:
        out[f"headroom_{h.key}"] = h.used
        out[f"headroom_{h.key}_limit"] = h.limit
    return out


_LABELS = {
    "ops": ("I/O operations", "ops/s", True),
    "read_mibps": ("Read throughput", "MiB/s", False),
    "write_mibps": ("Write throughput", "MiB/s", False),
    "combined_pct": ("Read and write throughput, one combined limit", "%", False),
    "read_iops": ("Read operations (data and metadata)", "ops/s", False),
    "write_iops": ("Write operations (data and metadata)", "ops/s", False),
    "metadata_iops": ("Metadata operations", "ops/s", False),
}
_NOTES = {"metadata_iops": "not split into reads and writes: no limit applies"}


def _headroom(key: str, used: float, limit: float | None) -> Headroom:
    label, unit, approx = _LABELS[key]
    return Headroom(key, label, used, limit, unit, approx)


def headroom_from_figures(figures: dict) -> list[Headroom]:
    """The headroom stored by ``headroom_figures``, for the page and the API."""
    out = []
    for key in _LABELS:
        used = figures.get(f"headroom_{key}")
        if isinstance(used, int | float):
            out.append(_headroom(key, float(used), figures.get(f"headroom_{key}_limit")))
    return out


def combined_share_pct(sample: Sample, limits: ModeLimits) -> float | None:
    """Read plus write throughput as a share of their one combined budget [PERF], or None
    when either is missing (a gap, never a zero)."""
    if sample.data_read_bytes is None or sample.data_write_bytes is None:
        return None
    if not limits.read_mibps or not limits.write_mibps:
        return None
    p = sample.period_s
    read = sample.data_read_bytes / MIB / p
    write = sample.data_write_bytes / MIB / p
    return 100.0 * (read / limits.read_mibps + write / limits.write_mibps)


def _three_digits(value: float) -> float:
    """3,428.6 -> 3,430: an inferred limit is not known to the unit."""
    if value <= 0:
        return value
    return float(round(value, 2 - int(math.floor(math.log10(value)))))


def _quantity(value: float, unit: str) -> tuple[str, str]:
    if unit == "MiB/s" and value >= GIB_PER_S:
        value, unit = value / GIB_PER_S, "GiB/s"
        return (f"{value:,.0f}" if value == int(value) else f"{value:,.1f}"), unit
    return (f"{value:,.1f}" if value < 10 else f"{value:,.0f}"), unit

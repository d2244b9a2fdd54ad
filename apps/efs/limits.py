"""Documented per-file-system limits of Amazon EFS, and a file system's headroom under them.

Pure: no Django, no I/O. Sources (read 2026-11-24 through the ``search`` tool):

- [L1] AWS, "Amazon EFS performance", https://docs.aws.amazon.com/efs/latest/ug/performance.html
  (the current page's "Performance specifications for file systems using General Purpose
  performance mode" table, read in its ja_jp and zh_cn copies), for Regional file systems:

  | throughput mode | read IOPS | write IOPS | read throughput | write throughput |
  |---|---|---|---|---|
  | Elastic     | 250,000 (900,000-2,500,000 on request) | 50,000 (500,000) | 20-60 GiBps | 1-5 GiBps |
  | Provisioned | 55,000 | 25,000 | 3-10 GiBps | 1-3.33 GiBps |
  | Bursting    | 35,000 | 7,000  | 3-5 GiBps  | 1-3 GiBps |

  Footnote: "by default, file systems using Elastic throughput can drive up to 90,000 read
  IOPS for infrequently accessed data, 250,000 read IOPS for frequently accessed data, and
  50,000 write IOPS", raised on request up to 10x. Throughput maxima depend on the region
  ("Amazon EFS quotas", https://docs.aws.amazon.com/efs/latest/ug/limits.html, lists them per
  region): Vigil uses the lowest value of each range, a limit that holds in every region.
- [L2] AWS re:Post, "What are the differences between General Purpose and Max I/O performance
  modes in Amazon EFS?", https://repost.aws/knowledge-center/linux-efs-performance-modes:
  "Max I/O performance mode doesn't have a file system operations limit"; General Purpose
  allows 35,000 file operations per second, a read costing one and a write five. Max I/O
  file systems use the throughput limits of their throughput mode (inference from [L1]).

For General Purpose file systems that report PercentIOLimit, the operations limit is the one
the metric implies (``metrics.implied_ops_limit``): "2,880 of ~3,430 ops/s".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .metrics import MIB, Sample, implied_ops_limit

GIB_PER_S = 1024.0  # MiB/s in a GiB/s


@dataclass(frozen=True)
class ModeLimits:
    read_iops: float | None
    write_iops: float | None
    read_mibps: float
    write_mibps: float


#: [L1], Regional file systems, the lowest regional throughput of each range.
LIMITS: dict[str, ModeLimits] = {
    "elastic": ModeLimits(250_000, 50_000, 20 * GIB_PER_S, 1 * GIB_PER_S),
    "provisioned": ModeLimits(55_000, 25_000, 3 * GIB_PER_S, 1 * GIB_PER_S),
    "bursting": ModeLimits(35_000, 7_000, 3 * GIB_PER_S, 1 * GIB_PER_S),
}
SOURCE = "https://docs.aws.amazon.com/efs/latest/ug/performance.html"


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
    def pct(self) -> float | None:
        return None if not self.limit else 100.0 * self.used / self.limit

    @property
    def text(self) -> str:
        """ "2,880 of ~3,430 ops/s", "120 MiB/s of 1.0 GiB/s"."""
        used, used_unit = _quantity(self.used, self.unit)
        if self.limit is None:
            return f"{used} {used_unit} (no documented limit)"
        limit, limit_unit = _quantity(
            _three_digits(self.limit) if self.approx else self.limit, self.unit
        )
        tilde = "~" if self.approx else ""
        if used_unit == limit_unit:
            return f"{used} of {tilde}{limit} {limit_unit}"
        return f"{used} {used_unit} of {tilde}{limit} {limit_unit}"


def headroom(sample: Sample | None, performance_mode: str, throughput_mode: str) -> list[Headroom]:
    """What ``sample`` (the latest minute with operations) uses of the file system's limits.

    General Purpose with PercentIOLimit: operations against the limit the metric implies.
    Elastic or Max I/O (or General Purpose without PercentIOLimit): read and write throughput
    and operations against the documented limits of its throughput mode [L1][L2].
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
    limits = LIMITS.get(throughput_mode, LIMITS["bursting"])
    max_io = performance_mode != "generalPurpose"
    if sample.data_read_bytes is not None:
        out.append(_headroom("read_mibps", sample.data_read_bytes / MIB / p, limits.read_mibps))
    if sample.data_write_bytes is not None:
        out.append(_headroom("write_mibps", sample.data_write_bytes / MIB / p, limits.write_mibps))
    if not any(h.key == "ops" for h in out):
        if sample.data_read_count is not None:
            read_limit = None if max_io else limits.read_iops
            out.append(_headroom("read_iops", sample.data_read_count / p, read_limit))
        writes = (sample.data_write_count or 0.0) + (sample.metadata_count or 0.0)
        if sample.data_write_count is not None:
            write_limit = None if max_io else limits.write_iops
            out.append(_headroom("write_iops", writes / p, write_limit))
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
    "read_iops": ("Read operations", "ops/s", False),
    "write_iops": ("Write and metadata operations", "ops/s", False),
}


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

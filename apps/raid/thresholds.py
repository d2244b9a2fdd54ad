"""The thresholds an array is judged with: its disks' SMART counters (``disks.DiskThresholds``)
and its scrubs (``scrub.ScrubThresholds``), which a region or one array may set over the
defaults from settings (``SPECS``; docs/architecture.md, "Thresholds per subject").

Pure module: no Django, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from apps.lib.thresholds import Spec
from apps.raid.disks import DiskThresholds
from apps.raid.scrub import ScrubThresholds

__all__ = ["SPECS", "ArrayThresholds"]


@dataclass(frozen=True)
class ArrayThresholds:
    disk: DiskThresholds = DiskThresholds()
    scrub: ScrubThresholds = ScrubThresholds()


def _counter(name: str, label: str, unit: str, high: float = 1_000_000) -> Spec:
    return Spec(name, label, unit, 0, high, whole=True, field=f"disk.{name}")


#: The thresholds a region or one array may set (0 turns a rule off, as in settings).
SPECS = (
    _counter("reallocated_sectors", "Disk failing at reallocated sectors", "sectors"),
    _counter("pending_sectors", "Disk failing at pending sectors", "sectors"),
    _counter("offline_uncorrectable", "Disk failing at offline-uncorrectable sectors", "sectors"),
    _counter("grown_defects", "Disk failing at grown defects", "defects"),
    _counter("uncorrected_errors", "Disk failing at uncorrected errors", "errors"),
    _counter("media_errors", "Disk failing at NVMe media errors", "errors"),
    _counter("percentage_used", "Disk failing at NVMe life used", "%", 255),
    _counter("temperature_c", "Disk hot at", "°C", 150),
    Spec("check_max_days", "No check for more than", "days", 0, 3650, whole=True,
         field="scrub.max_days"),
    Spec("mismatch_sectors", "A check finds at least", "sectors out of step", 0, 1_000_000,
         whole=True, field="scrub.mismatch_sectors"),
)  # fmt: skip

"""The disks under a host's arrays: who each one is, and whether SMART says it is failing.

Pure module: no Django, no I/O. ``judge(reading, thresholds)`` turns one ``SmartReading`` into
a ``DiskHealth`` (critical when SMART says FAILED, a warning at a counter's threshold or when
hot, both but "hot" meaning *failing*; unknown, saying why, when SMART cannot read it);
``leaf_disks(...)`` gathers, for every leaf member of the arrays, the disk it lives on (``sdc1``
is on ``sdc``), its stable identity (WWN, else model and serial, else by-id name, else its
flagged kernel name) and its health. The thresholds are data (``DiskThresholds``). What users
see: docs/raid.md, "Disks, scrubs and replacement advice".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from apps.lib.status import Status
from apps.lib.thresholds import Notes
from apps.raid.parse_devlinks import Links
from apps.raid.parse_smartctl import SmartReading
from apps.raid.smart import EXIT_BITS
from apps.raid.topology import disk_of

__all__ = ["DiskHealth", "DiskThresholds", "LeafDisk", "identity", "judge", "thresholds_from"]


@dataclass(frozen=True)
class DiskThresholds:
    """Where a counter makes a disk failing (at or above); Vigil's choice, not a vendor's
    (``smart.FACTS`` has what the counters mean). 0 turns a rule off."""

    reallocated_sectors: int = 10
    pending_sectors: int = 1
    offline_uncorrectable: int = 1
    grown_defects: int = 10
    uncorrected_errors: int = 1
    media_errors: int = 1
    percentage_used: int = 90
    temperature_c: int = 60  # a warning, not "failing"
    #: Which thresholds a region or an array set (``apps.lib.thresholds.resolve``).
    notes: Notes = Notes()


def thresholds_from(values: Mapping[str, object]) -> DiskThresholds:
    """``DiskThresholds`` over the defaults; ValueError naming an unknown or bad key."""
    known = {f.name for f in fields(DiskThresholds)} - {"notes"}
    for key, value in values.items():
        if key not in known:
            raise ValueError(f"{key!r} is not a disk threshold ({', '.join(sorted(known))})")
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31:
            raise ValueError(f"{key!r} must be a whole number from 0 (off)")
    return DiskThresholds(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class DiskHealth:
    status: Status
    failing: bool  # SMART predicts failure: named in the array's headroom and verdict
    summary: str  # "failing SMART: pending sectors 24", "SMART passed", "SMART cannot read: …"


#: (SmartReading field, threshold field, words) of the counters that make a disk failing.
_COUNTERS = (
    ("reallocated_sectors", "reallocated_sectors", "reallocated sectors"),
    ("pending_sectors", "pending_sectors", "pending sectors"),
    ("offline_uncorrectable", "offline_uncorrectable", "offline-uncorrectable sectors"),
    ("grown_defects", "grown_defects", "grown defects"),
    ("uncorrected_errors", "uncorrected_errors", "uncorrected errors"),
    ("media_errors", "media_errors", "media errors"),
    ("percentage_used", "percentage_used", "% of rated life used"),
)


def judge(
    reading: SmartReading | None, thresholds: DiskThresholds, problem: str = ""
) -> DiskHealth:
    """The health of one disk; ``problem`` says why there is no reading."""
    if reading is None:
        return DiskHealth(Status.UNKNOWN, False, f"SMART not read: {problem or 'not sent'}")
    if not reading.has_health:
        return DiskHealth(Status.UNKNOWN, False, f"SMART cannot read it: {_why_not(reading)}")
    failed = []
    if reading.passed is False:
        failed.append("overall-health self-assessment FAILED")
    if reading.critical_warning:
        failed.append(f"NVMe critical warning 0x{reading.critical_warning:02x}")
    failing = []
    for field_name, limit_name, words in _COUNTERS:
        value = getattr(reading, field_name)
        limit = getattr(thresholds, limit_name)
        if value is not None and limit and value >= limit:
            said = f"{value}{words}" if words.startswith("%") else f"{words} {value}"
            failing.append(said + _over(thresholds, limit_name, limit))
    if reading.failing_attributes:
        failing.append(f"attributes at threshold: {', '.join(reading.failing_attributes)}")
    hot = []
    temperature = reading.temperature_c
    if (
        temperature is not None
        and thresholds.temperature_c
        and temperature >= thresholds.temperature_c
    ):
        hot.append(
            f"{temperature} °C" + _over(thresholds, "temperature_c", thresholds.temperature_c)
        )
    if failed:
        return DiskHealth(Status.CRITICAL, True, "failing SMART: " + "; ".join(failed + failing))
    if failing:
        return DiskHealth(Status.WARNING, True, "failing SMART: " + "; ".join(failing + hot))
    if hot:
        return DiskHealth(Status.WARNING, False, f"hot: {hot[0]}")
    return DiskHealth(Status.OK, False, "SMART passed" if reading.passed else "SMART counters ok")


def _over(thresholds: DiskThresholds, name: str, limit: int) -> str:
    """`` (at least 5: this array's threshold; default 10)`` when one was set, else ""."""
    note = thresholds.notes(name)
    return f" (at least {limit}: {note})" if note else ""


def _why_not(reading: SmartReading) -> str:
    if reading.messages:
        return reading.messages[0]
    if reading.smart_available is False:
        return "the device lacks SMART capability (a virtual disk, a RAID volume or a LUN)"
    bits = [text for bit, text in EXIT_BITS.items() if (reading.exit_status or 0) >> bit & 1]
    model = f" ({reading.model})" if reading.model else ""
    return (bits[0] if bits else "no health data in smartctl's answer") + model


def identity(reading: SmartReading | None, links: Links | None, device: str) -> tuple[str, bool]:
    """The disk's key among the host's disks, and whether it survives a rename."""
    if reading is not None and reading.wwn:
        return f"wwn:{reading.wwn}", True
    if reading is not None and reading.serial:
        return f"serial:{reading.model}:{reading.serial}"[:200], True
    if links is not None and links.preferred:
        return f"by-id:{links.preferred}"[:200], True
    return f"dev:{device}", False


@dataclass(frozen=True)
class LeafDisk:
    """A disk holding leaf members of the host's arrays."""

    device: str  # the whole disk's kernel name: what smartctl was run on
    members: tuple[str, ...]  # the md members on it: "sdc", "sdc1", ...
    key: str
    stable: bool
    reading: SmartReading | None
    links: Links
    health: DiskHealth


def disk_name(member: str) -> str:
    """The whole disk a leaf member lives on (``sdc1`` -> ``sdc``)."""
    return disk_of(member) or member


def leaf_disks(
    leaves: list[str],
    readings: Mapping[str, SmartReading],
    problems: Mapping[str, str],
    links: Mapping[str, Links],
    thresholds: DiskThresholds,
    smart_sent: bool,
) -> dict[str, LeafDisk]:
    """``{"sdc": LeafDisk}`` for the disks under ``leaves`` (member names, in report order);
    ``smart_sent`` is False when the host sent no smartctl output at all."""
    members: dict[str, list[str]] = {}
    for leaf in leaves:
        members.setdefault(disk_name(leaf), []).append(leaf)
    found = {}
    keys: set[str] = set()
    for device, on_it in members.items():
        reading = readings.get(device)
        own = links.get(device, Links())
        key, stable = identity(reading, own, device)
        if key in keys:  # two devices claim one identity (multipath, a cloned serial)
            key, stable = f"dev:{device}", False
        keys.add(key)
        problem = problems.get(device) or (
            "smartctl's output for it was not sent" if smart_sent else "the host sent no SMART"
        )
        found[device] = LeafDisk(
            device=device,
            members=tuple(on_it),
            key=key,
            stable=stable,
            reading=reading,
            links=own,
            health=judge(reading, thresholds, problem),
        )
    return found


def label(disk: LeafDisk) -> str:
    """How a disk is named in a sentence: "sdc (serial 9RK1XXXX)"."""
    serial = disk.reading.serial if disk.reading is not None else ""
    return f"{disk.device} (serial {serial})" if serial else disk.device

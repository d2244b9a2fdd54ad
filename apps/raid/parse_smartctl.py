"""Read what ``smartctl --json -a /dev/X`` prints (smartmontools 7 and later) for one disk.

Pure module: no Django, no I/O. ``parse(text)`` returns a ``SmartReading``: the disk's identity
(model, serial, WWN, firmware, capacity), whether SMART could be read at all, the overall
self-assessment and the counters Vigil judges (``apps/raid/smart.py`` has the facts behind
them). Both ATA and SCSI key names of smartctl 7.0 to 7.5 are read.

The text comes from a host, so it is bounded before it is believed: at most ``MAX_BYTES``, JSON
that Python's parser reads without going deeper than it can (a ``RecursionError`` is an
answer, not a crash), only the known keys are looked at, numbers outside 0..2⁶³−1 and texts the
database could not keep are left out, and every text is cut to its column. What cannot be read
raises ``SmartUnreadable`` with the reason; it makes that disk's health unknown, never the
report's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from apps.raid import bounds

__all__ = ["MAX_BYTES", "SmartReading", "SmartUnreadable", "parse"]

MAX_BYTES = 256 * 1024  # smartctl -a for a SATA disk is 10-30 KB; -x with long logs ~100 KB
TEXT = 100  # characters kept of a model, serial or firmware (the columns' lengths)
MESSAGE = 200  # characters kept of a smartctl message
MESSAGES = 4
_HEX = re.compile(r"0x[0-9a-fA-F]{16,32}", re.ASCII)


class SmartUnreadable(ValueError):
    """smartctl's output for one disk could not be read; the message says why."""


@dataclass(frozen=True)
class SmartReading:
    device: str  # as smartctl named it ("/dev/sdb"), "" when absent
    device_type: str  # "sat", "scsi", "nvme", "usbjmicron", ...
    protocol: str  # "ATA", "SCSI", "NVMe" or ""
    model: str
    serial: str
    wwn: str  # "0x5000cca26cc73bed" (ATA WWN, SCSI logical unit id) or "eui.…" (NVMe)
    firmware: str
    capacity_bytes: int | None
    smart_available: bool | None
    smart_enabled: bool | None
    passed: bool | None  # the overall self-assessment; None when not given
    exit_status: int | None
    version: tuple[int, ...]
    messages: tuple[str, ...]  # smartctl's errors and warnings
    reallocated_sectors: int | None = None
    pending_sectors: int | None = None
    offline_uncorrectable: int | None = None
    grown_defects: int | None = None
    uncorrected_errors: int | None = None
    percentage_used: int | None = None
    media_errors: int | None = None
    critical_warning: int | None = None
    available_spare: int | None = None
    available_spare_threshold: int | None = None
    temperature_c: int | None = None
    power_on_hours: int | None = None
    failing_attributes: tuple[str, ...] = ()  # ATA attributes at or below threshold now

    @property
    def has_health(self) -> bool:
        """Whether SMART said anything about the disk's health (not only who it is)."""
        counters = (
            self.reallocated_sectors,
            self.pending_sectors,
            self.offline_uncorrectable,
            self.grown_defects,
            self.uncorrected_errors,
            self.percentage_used,
            self.media_errors,
            self.critical_warning,
        )
        return self.passed is not None or any(c is not None for c in counters)


def parse(text: str) -> SmartReading:
    """One disk's reading; ``SmartUnreadable`` saying why when there is none."""
    if len(text) > MAX_BYTES:
        raise SmartUnreadable(f"smartctl printed more than {MAX_BYTES // 1024} KiB")
    if not text.strip():
        raise SmartUnreadable("smartctl printed nothing")
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise SmartUnreadable("smartctl's JSON is nested too deep") from None
    except ValueError:
        raise SmartUnreadable(
            "not JSON: smartctl older than 7.0 (no --json), or not smartctl"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("smartctl"), dict):
        raise SmartUnreadable("not smartctl's JSON (no 'smartctl' object)")
    tool = data["smartctl"]
    device = _dict(data, "device")
    return SmartReading(
        device=_text(device.get("name")),
        device_type=_text(device.get("type")),
        protocol=_text(device.get("protocol")),
        model=_text(data.get("model_name") or data.get("scsi_model_name")),
        serial=_text(data.get("serial_number")),
        wwn=_wwn(data),
        firmware=_text(data.get("firmware_version") or data.get("scsi_revision")),
        capacity_bytes=_count(_dict(data, "user_capacity").get("bytes")),
        smart_available=_flag(_dict(data, "smart_support").get("available")),
        smart_enabled=_flag(_dict(data, "smart_support").get("enabled")),
        passed=_flag(_dict(data, "smart_status").get("passed")),
        exit_status=_count(tool.get("exit_status")),
        version=tuple(v for v in _list(tool.get("version"))[:3] if _count(v) is not None),
        messages=_messages(tool),
        **_ata(data),
        **_scsi(data),
        **_nvme(data),
        temperature_c=_temperature(data),
        power_on_hours=_count(_dict(data, "power_on_time").get("hours")),
    )


def _no_constant(name: str) -> object:
    raise ValueError(name)


def _dict(data: object, key: str) -> dict[str, Any]:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _count(value: object) -> int | None:
    """A whole number the database can keep, else None (a bool is not a count)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= bounds.MAX_BIGINT else None


def _flag(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _text(value: object, limit: int = TEXT) -> str:
    if not isinstance(value, str) or bounds.unstorable(value):
        return ""
    value = " ".join(value.split())
    return "" if value == "REDACTED" else value[:limit]


def _wwn(data: dict[str, Any]) -> str:
    wwn = _dict(data, "wwn")
    naa, oui, ident = (_count(wwn.get(k)) for k in ("naa", "oui", "id"))
    if None not in (naa, oui, ident) and naa < 16 and oui < 2**24 and ident < 2**36:  # type: ignore[operator]
        return f"0x{naa:x}{oui:06x}{ident:09x}"
    unit = _text(data.get("logical_unit_id"))
    if _HEX.fullmatch(unit):
        return unit.lower()
    for namespace in _list(data.get("nvme_namespaces"))[:8]:
        eui = _dict(namespace, "eui64")
        oui, ext = _count(eui.get("oui")), _count(eui.get("ext_id"))
        if oui is not None and ext is not None and oui < 2**24 and ext < 2**40:
            return f"eui.{oui:06x}{ext:010x}"
    return ""


def _messages(tool: dict[str, Any]) -> tuple[str, ...]:
    found = []
    for message in _list(tool.get("messages"))[:16]:
        if not isinstance(message, dict) or message.get("severity") not in ("error", "warning"):
            continue
        if text := _text(message.get("string"), MESSAGE):
            found.append(text)
    return tuple(found[:MESSAGES])


def _ata(data: dict[str, Any]) -> dict[str, Any]:
    """Raw values of the ATA attributes Vigil judges, and the attributes failing now."""
    raw: dict[int, int | None] = {}
    failing = []
    for row in _list(_dict(data, "ata_smart_attributes").get("table"))[:256]:
        if not isinstance(row, dict):
            continue
        ident = _count(row.get("id"))
        if ident is None:
            continue
        raw.setdefault(ident, _count(_dict(row, "raw").get("value")))
        if row.get("when_failed") == "now" and (name := _text(row.get("name"), 40)):
            failing.append(name)
    return {
        "reallocated_sectors": raw.get(5),
        "pending_sectors": raw.get(197),
        "offline_uncorrectable": raw.get(198),
        "failing_attributes": tuple(failing[:8]),
    }


def _scsi(data: dict[str, Any]) -> dict[str, Any]:
    log = _dict(data, "scsi_error_counter_log")
    counts = [_count(_dict(log, part).get("total_uncorrected_errors")) for part in log]
    known = [c for c in counts[:3] if c is not None]
    return {
        "grown_defects": _count(data.get("scsi_grown_defect_list")),
        "uncorrected_errors": min(sum(known), bounds.MAX_BIGINT) if known else None,
    }


def _nvme(data: dict[str, Any]) -> dict[str, Any]:
    log = _dict(data, "nvme_smart_health_information_log")
    return {
        "percentage_used": _count(log.get("percentage_used")),
        "media_errors": _count(log.get("media_errors")),
        "critical_warning": _count(log.get("critical_warning")),
        "available_spare": _count(log.get("available_spare")),
        "available_spare_threshold": _count(log.get("available_spare_threshold")),
    }


def _temperature(data: dict[str, Any]) -> int | None:
    """The current temperature in °C; 0 (what a RAID volume reports) is no reading."""
    current = _count(_dict(data, "temperature").get("current"))
    return current if current is not None and 0 < current < 200 else None

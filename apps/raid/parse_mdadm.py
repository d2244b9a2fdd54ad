"""Parse the output of ``mdadm --detail /dev/mdX`` (one array) into frozen dataclasses.

Pure module: no Django, no I/O. ``parse(text)`` returns a ``Detail``; ``as_dict()`` gives the
fact shape of ``shared/fixtures/mdadm-detail/*.expected.json``. It reads the ``Key : value``
header (whatever its alignment; keys it does not model are ignored) and the member table (a
gone member's device is None, ``missing`` ending its state). A line of no known shape, or a key
given twice or unreadable, raises ``ParseError`` naming it; a value that could not be stored,
or more members than ``bounds.MAX_MEMBERS``, raises ``Refused``, which refuses the whole report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any

from apps.raid import bounds
from apps.raid.errors import ParseError, Refused

__all__ = ["Detail", "DetailMember", "ParseError", "Refused", "parse"]

_A = re.ASCII
_DEVICE = re.compile(r"(/\S+):", _A)
_KEY_VALUE = re.compile(r"([A-Z][A-Za-z' ]*[A-Za-z'])\s+:(?:\s+(.*))?", _A)
_TABLE_HEADER = re.compile(r"Number\s+Major\s+Minor\s+RaidDevice(?:\s+State)?", _A)
_CELL = re.compile(r"-|[0-9]{1,24}", _A)
_SIZE = re.compile(r"([0-9]{1,24})(?:\s+\(.*\))?", _A)
_PERCENT = re.compile(r"([0-9]{1,24}(?:\.[0-9]{1,24})?)%\s+complete", _A)

# Header label -> (field, kind). "Device Size" is what old mdadm prints for "Used Dev Size".
_KEYS: dict[str, tuple[str, str]] = {
    "Version": ("version", "text"),
    "Creation Time": ("creation_time", "text"),
    "Raid Level": ("raid_level", "text"),
    "Array Size": ("array_size_kib", "size"),
    "Used Dev Size": ("used_dev_size_kib", "size"),
    "Device Size": ("used_dev_size_kib", "size"),
    "Raid Devices": ("raid_devices", "int"),
    "Total Devices": ("total_devices", "int"),
    "Preferred Minor": ("preferred_minor", "int"),
    "Persistence": ("persistence", "text"),
    "Intent Bitmap": ("intent_bitmap", "text"),
    "Update Time": ("update_time", "text"),
    "State": ("state", "text"),
    "Active Devices": ("active_devices", "int"),
    "Working Devices": ("working_devices", "int"),
    "Failed Devices": ("failed_devices", "int"),
    "Spare Devices": ("spare_devices", "int"),
    "Layout": ("layout", "text"),
    "Chunk Size": ("chunk_size", "text"),
    "Consistency Policy": ("consistency_policy", "text"),
    "Rebuild Status": ("rebuild_status_percent", "percent"),
    "Reshape Status": ("reshape_status_percent", "percent"),
    "Resync Status": ("resync_status_percent", "percent"),
    "Delta Devices": ("delta_devices", "text"),
    "Name": ("name", "text"),
    "UUID": ("uuid", "text"),
    "Events": ("events", "text"),
}


@dataclass(frozen=True)
class DetailMember:
    """A row of the member table; ``-`` cells are None, ``device`` is None for removed slots."""

    number: int | None
    major: int | None
    minor: int | None
    raid_device: int | None
    state: str
    device: str | None

    @property
    def name(self) -> str | None:
        """The kernel name as /proc/mdstat prints it: ``/dev/sdb2`` -> ``sdb2``."""
        if self.device is None:
            return None
        return self.device.removeprefix("/dev/").replace("/", "!")

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Detail:
    device: str
    version: str | None = None
    creation_time: str | None = None
    raid_level: str | None = None
    array_size_kib: int | None = None
    used_dev_size_kib: int | None = None
    raid_devices: int | None = None
    total_devices: int | None = None
    preferred_minor: int | None = None
    persistence: str | None = None
    intent_bitmap: str | None = None
    update_time: str | None = None
    state: str | None = None
    active_devices: int | None = None
    working_devices: int | None = None
    failed_devices: int | None = None
    spare_devices: int | None = None
    layout: str | None = None
    chunk_size: str | None = None
    consistency_policy: str | None = None
    rebuild_status_percent: int | float | None = None
    reshape_status_percent: int | float | None = None
    resync_status_percent: int | float | None = None
    delta_devices: str | None = None
    name: str | None = None
    uuid: str | None = None
    events: str | None = None
    members: tuple[DetailMember, ...] = ()

    @property
    def state_flags(self) -> list[str]:
        if self.state is None:
            return []
        return [flag.strip() for flag in self.state.split(",") if flag.strip()]

    def slot_of(self, device_name: str) -> int | None:
        """The RaidDevice slot of a member named as in /proc/mdstat (``sdb2``), if it has one."""
        for member in self.members:
            if member.name == device_name:
                return member.raid_device
        return None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "members":
                continue
            out[f.name] = getattr(self, f.name)
            if f.name == "state":
                out["state_flags"] = self.state_flags
        out["members"] = [m.as_dict() for m in self.members]
        return out


def parse(text: str) -> Detail:
    """Read one array's ``mdadm --detail``; raise ``ParseError`` naming an unreadable line."""
    values: dict[str, Any] = {}
    members: list[DetailMember] = []
    in_table = False
    device: str | None = None

    for number, raw in enumerate(text.split("\n"), start=1):
        if why := bounds.unstorable(raw):
            raise Refused(why, number, raw)
        line = raw.replace("\t", " ").replace("\xa0", " ").replace("\r", "").strip(" ")
        if not line:
            continue
        if device is None:
            match = _DEVICE.fullmatch(line)
            if not match:
                raise ParseError("expected the '/dev/mdX:' line first", number, raw)
            device = match.group(1)
            continue
        if in_table:
            if len(members) >= bounds.MAX_MEMBERS:
                raise Refused(f"more than {bounds.MAX_MEMBERS} member rows", number, raw)
            members.append(_row(line, number, raw))
            continue
        if _TABLE_HEADER.fullmatch(line):
            in_table = True
            continue
        match = _KEY_VALUE.fullmatch(line)
        if not match:
            raise ParseError("unreadable line", number, raw)
        label = " ".join(match.group(1).split())
        if label not in _KEYS:
            continue
        field, kind = _KEYS[label]
        if field in values:
            raise ParseError(f"{label!r} given twice", number, raw)
        values[field] = _value(kind, (match.group(2) or "").strip(" "), number, raw)

    if device is None:
        raise ParseError("no '/dev/mdX:' line", 1, text.split("\n", 1)[0])
    return Detail(device=device, members=tuple(members), **values)


def _value(kind: str, value: str, number: int, raw: str) -> Any:
    if kind == "text":
        return value or None
    if kind == "int":
        if not (value.isascii() and value.isdigit() and len(value) <= 24):
            raise ParseError("expected a number", number, raw)
        return int(value)
    if kind == "size":
        match = _SIZE.fullmatch(value)
        if not match:
            raise ParseError("expected a size in KiB", number, raw)
        return int(match.group(1))
    match = _PERCENT.fullmatch(value)
    if not match:
        raise ParseError("expected 'N% complete'", number, raw)
    percent = float(match.group(1))
    return int(percent) if percent.is_integer() and "." not in match.group(1) else percent


def _row(line: str, number: int, raw: str) -> DetailMember:
    """Four number cells, the state in words, and the device path unless it was removed.

    Read by tokens, not with one pattern: a lazy state before an optional path backtracks
    in quadratic time over a long run of spaces."""
    tokens = line.split()
    if len(tokens) < 4 or not all(_CELL.fullmatch(cell) for cell in tokens[:4]):
        raise ParseError("unreadable member row", number, raw)
    cells = [None if cell == "-" else int(cell) for cell in tokens[:4]]
    if any(cell is not None and cell > bounds.MAX_INT for cell in cells):
        raise Refused(f"a number out of range (at most {bounds.MAX_INT})", number, raw)
    rest = tokens[4:]
    device = rest.pop() if rest and rest[-1].startswith("/") and len(rest[-1]) > 1 else None
    state = " ".join(rest)
    if len(state) > bounds.MAX_STATE:
        raise Refused(f"member state longer than {bounds.MAX_STATE} characters", number, raw)
    if device is not None and len(device) > bounds.MAX_DEVICE + len("/dev/"):
        raise Refused(f"device name longer than {bounds.MAX_DEVICE} characters", number, raw)
    return DetailMember(*cells, state=state, device=device)

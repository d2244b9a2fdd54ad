"""Parse the text of Linux ``/proc/mdstat`` into frozen dataclasses.

Pure module: no Django, no I/O. ``parse(text)`` returns an ``Mdstat``; ``as_dict()`` gives
the fact shape of ``shared/fixtures/mdstat/*.expected.json``. Lines are recognised by their
content (the header, status, progress and ``bitmap:`` lines the kernel's ``md_seq_show``
prints), not by their indentation, which published samples lose or change. One array's odd
line makes that array ``unreadable`` and the others are read; a text that is not /proc/mdstat,
lists an array twice or goes beyond ``bounds`` raises ``ParseError`` naming the line
(docs/raid.md, "Limits"). The number in brackets is a member's descriptor number
(``desc_nr``), not its slot: ``topology.py`` infers the slots.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from apps.raid import bounds
from apps.raid.errors import ParseError
from apps.raid.kernel import MDSTAT_STATES, PROGRESS_ACTIONS

__all__ = ["Array", "Bitmap", "Mdstat", "Member", "ParseError", "Sync", "parse"]

LEVELS = frozenset(
    {"linear", "multipath", "faulty", "raid0", "raid1", "raid4", "raid5", "raid6", "raid10"}
)
SYNC_ACTIONS = PROGRESS_ACTIONS

_A = re.ASCII
_HEADER = re.compile(r"([A-Za-z][A-Za-z0-9_]*)\s*:\s*(\S+)(?:\s+(.*))?", _A)
_ODD_HEADER = re.compile(r"(md[A-Za-z0-9_]*)(?:\s.*)?", _A)
_BITMAP_LINE = re.compile(r"bitmap\s*:.*", _A)
# A number of 25 digits or more is beyond any column (bigint: 19): the report is refused.
_LONG_NUMBER = re.compile(r"(?<![A-Za-z0-9_])[0-9]{25}", _A)
_READ_ONLY = re.compile(r"\((read-only|auto-read-only)\)", _A)
_MEMBER = re.compile(r"([^\s\[\]()]+)\[([0-9]{1,24})\]((?:\([FSWRJ]\))*)", _A)
_BLOCKS = re.compile(r"([0-9]{1,24})\s+blocks(?:\s+(.*))?", _A)
_PROGRESS = re.compile(
    r"(?:\[[=>.]*\]\s*)?([a-z]+)\s*=\s*([0-9]{1,24}(?:\.[0-9]{1,24})?)%\s*"
    r"\(\s*([0-9]{1,24})\s*/\s*([0-9]{1,24})\s*\)"
    r"(?:\s*finish\s*=\s*([0-9]{1,24}(?:\.[0-9]{1,24})?)min)?"
    r"(?:\s*speed\s*=\s*([0-9]{1,24})K/sec)?",
    _A,
)
_WAITING = re.compile(r"([a-z]+)\s*=\s*(DELAYED|PENDING|REMOTE)", _A)
_BITMAP = re.compile(
    r"bitmap:\s*([0-9]{1,24})/([0-9]{1,24})\s+pages\s+\[([0-9]{1,24})KB\],\s*([0-9]{1,24})KB\s+chunk(?:,\s*file:.*)?",
    _A,
)
_PERSONALITIES = re.compile(r"Personalities\s*:(.*)", _A)
_UNUSED = re.compile(r"unused\s+devices\s*:\s*(.*)", _A)
_READ_AHEAD = re.compile(r"read_ahead\s+.*", _A)

# Pieces of the status line after "N blocks", tried in order at the current position.
_STATUS_PIECES: list[tuple[str, re.Pattern[str]]] = [
    ("super", re.compile(r"super\s+(\S+)", _A)),
    (
        "parity",
        re.compile(
            r"level\s+([0-9]{1,24}),\s*([0-9]{1,24}[kK])\s+chunk,\s*algorithm\s+([0-9]{1,24})", _A
        ),
    ),
    ("chunks", re.compile(r"([0-9]{1,24}[kK])\s+chunks", _A)),
    ("copies", re.compile(r"([0-9]{1,24})\s+(near|far|offset)-copies", _A)),
    ("set", re.compile(r"([0-9]{1,24})\s+devices\s+per\s+set", _A)),
    ("rounding", re.compile(r"([0-9]{1,24}[kK])\s+rounding", _A)),
    ("disks", re.compile(r"\[([0-9]{1,24})/([0-9]{1,24})\]\s*\[([U_]*)\]", _A)),
]


@dataclass(frozen=True)
class Member:
    device: str
    role: int
    flags: tuple[str, ...] = ()

    @property
    def faulty(self) -> bool:
        return "F" in self.flags

    @property
    def spare(self) -> bool:
        return "S" in self.flags

    def as_dict(self) -> dict[str, Any]:
        return {"device": self.device, "role": self.role, "flags": list(self.flags)}


@dataclass(frozen=True)
class Sync:
    """A progress line: a running action with figures, or a waiting ``resync=DELAYED``."""

    action: str
    state: str  # running | DELAYED | PENDING | REMOTE
    percent: float | None = None
    done_blocks: int | None = None
    total_blocks: int | None = None
    finish_minutes: float | None = None
    speed_kib_per_sec: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "state": self.state,
            "percent": self.percent,
            "done_blocks": self.done_blocks,
            "total_blocks": self.total_blocks,
            "finish_minutes": self.finish_minutes,
            "speed_kib_per_sec": self.speed_kib_per_sec,
        }


@dataclass(frozen=True)
class Bitmap:
    pages_used: int
    pages_total: int
    memory_kib: int
    chunk_kib: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "pages_used": self.pages_used,
            "pages_total": self.pages_total,
            "memory_kib": self.memory_kib,
            "chunk_kib": self.chunk_kib,
        }


@dataclass(frozen=True)
class Array:
    name: str
    state: str  # active | inactive | broken, or the word printed when ``unreadable``
    read_only: str | None = None
    level: str | None = None
    members: tuple[Member, ...] = ()
    raid_disks: int | None = None
    active_disks: int | None = None
    status: str | None = None
    blocks: int | None = None
    super: str | None = None
    chunk: str | None = None
    raid10_layout: str | None = None
    parity_level: int | None = None
    algorithm: int | None = None
    rounding: str | None = None
    sync: Sync | None = None
    bitmap: Bitmap | None = None
    unreadable: str | None = None  # "line 5: unknown state 'x': '...'": the array is unknown

    @property
    def member_count(self) -> int:
        return len(self.members)

    @property
    def failed_members(self) -> list[str]:
        return [m.device for m in self.members if "F" in m.flags]

    @property
    def spare_members(self) -> list[str]:
        return [m.device for m in self.members if "S" in m.flags]

    @property
    def write_mostly_members(self) -> list[str]:
        return [m.device for m in self.members if "W" in m.flags]

    @property
    def replacement_members(self) -> list[str]:
        return [m.device for m in self.members if "R" in m.flags]

    @property
    def missing_slots(self) -> int | None:
        return None if self.status is None else self.status.count("_")

    @property
    def degraded(self) -> bool | None:
        """``active_disks < raid_disks``: a mechanical comparison, not a health verdict."""
        if self.raid_disks is None or self.active_disks is None:
            return None
        return self.active_disks < self.raid_disks

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "state": self.state,
            "read_only": self.read_only,
            "level": self.level,
            "members": [m.as_dict() for m in self.members],
            "member_count": self.member_count,
            "failed_members": self.failed_members,
            "spare_members": self.spare_members,
            "write_mostly_members": self.write_mostly_members,
            "replacement_members": self.replacement_members,
            "raid_disks": self.raid_disks,
            "active_disks": self.active_disks,
            "status": self.status,
            "missing_slots": self.missing_slots,
            "degraded": self.degraded,
            "blocks": self.blocks,
            "super": self.super,
            "chunk": self.chunk,
            "raid10_layout": self.raid10_layout,
            "parity_level": self.parity_level,
            "algorithm": self.algorithm,
            "rounding": self.rounding,
            "sync": None if self.sync is None else self.sync.as_dict(),
            "bitmap": None if self.bitmap is None else self.bitmap.as_dict(),
            # only when set: the shared fixtures' shape has no such key
            **({} if self.unreadable is None else {"unreadable": self.unreadable}),
        }


@dataclass(frozen=True)
class Mdstat:
    personalities: tuple[str, ...]
    arrays: tuple[Array, ...]
    unused_devices: str | None

    @property
    def array_count(self) -> int:
        return len(self.arrays)

    def array(self, name: str) -> Array | None:
        return next((a for a in self.arrays if a.name == name), None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "personalities": list(self.personalities),
            "array_count": self.array_count,
            "arrays": [a.as_dict() for a in self.arrays],
            "unused_devices": self.unused_devices,
        }


def _clean(line: str) -> str:
    return line.replace("\t", " ").replace("\xa0", " ").replace("\r", "").strip(" ")


class _Odd(Exception):
    """One array's line that cannot be read: the array becomes unreadable, not the report."""


def parse(text: str) -> Mdstat:
    """Read a whole ``/proc/mdstat``; raise ``ParseError`` naming the first line that refuses
    the whole report (docs/raid.md, "Limits"); one array's odd line is that array's."""
    personalities: tuple[str, ...] | None = None
    unused: str | None = None
    arrays: list[dict[str, Any]] = []
    seen_names: set[str] = set()
    current: dict[str, Any] | None = None

    member_count = 0
    for number, raw in enumerate(text.split("\n"), start=1):

        def fail(problem: str, number: int = number, raw: str = raw) -> ParseError:
            return ParseError(problem, number, raw)

        if why := bounds.unstorable(raw):
            raise fail(why)
        line = _clean(raw)
        if not line:
            continue
        if _LONG_NUMBER.search(line):
            raise fail("a number of more than 24 digits, beyond any column")

        if personalities is None:
            match = _PERSONALITIES.fullmatch(line)
            if not match:
                raise fail("expected the 'Personalities :' line first")
            personalities = _personalities(match.group(1), fail)
            continue
        if unused is not None:
            raise fail("text after the 'unused devices' line")
        if match := _UNUSED.fullmatch(line):
            unused = match.group(1).strip(" ") or None
            if unused is None:
                raise fail("empty 'unused devices' line")
            current = None
            continue
        header, odd_header = _headers(line)
        if header or odd_header:
            current = _array_header(header, odd_header, len(arrays), seen_names, fail)
            member_count += len(current["members"])
            if member_count > bounds.MAX_DEVICES:
                raise fail(f"more than {bounds.MAX_DEVICES} member devices in one report")
            current["_line"] = (number, raw)
            arrays.append(current)
            continue
        if _READ_AHEAD.fullmatch(line) and current is None and not arrays:
            continue  # 2.4-era kernels print "read_ahead 1024 sectors" after Personalities
        if current is None:
            raise fail("status line outside of an array")
        if current.get("unreadable"):
            continue  # the rest of an array that could not be read
        try:
            _status_line(line, current, fail)
        except _Odd as odd:
            current["unreadable"] = str(fail(str(odd)))

    if personalities is None:
        raise ParseError("no 'Personalities :' line", 1, text.split("\n", 1)[0])
    return _mdstat(personalities, arrays, unused)


def _headers(line: str) -> tuple[re.Match[str] | None, re.Match[str] | None]:
    """The match of the header ``line`` is, or of the odd header it is (a name such as
    ``md0`` and then no header Vigil can read); neither for a ``bitmap:`` or any other line."""
    if _BITMAP_LINE.fullmatch(line):
        return None, None
    header = _HEADER.fullmatch(line)
    return header, None if header else _ODD_HEADER.fullmatch(line)


def _mdstat(
    personalities: tuple[str, ...], arrays: list[dict[str, Any]], unused: str | None
) -> Mdstat:
    """The report read, once its arrays are found to nest as a forest (``_check_nesting``)."""
    _check_nesting(arrays)
    for fields in arrays:
        del fields["_line"]
    return Mdstat(
        personalities=personalities,
        arrays=tuple(Array(**fields) for fields in arrays),
        unused_devices=unused,
    )


def _array_header(
    header: re.Match[str] | None,
    odd_header: re.Match[str] | None,
    count: int,
    seen_names: set[str],
    fail: Any,
) -> dict[str, Any]:
    """The fields of the array a header line starts (an odd header's: unreadable, saying
    why), once its name is new and short enough and ``count`` arrays leave room for it."""
    name = (header or odd_header).group(1)
    if name in seen_names:
        raise fail(f"array {name} listed twice")
    if count >= bounds.MAX_ARRAYS:
        raise fail(f"more than {bounds.MAX_ARRAYS} arrays")
    if len(name) > bounds.MAX_NAME:
        raise fail(f"array name longer than {bounds.MAX_NAME} characters")
    seen_names.add(name)
    current = _header(header, fail) if header else _odd_header(name)
    if problem := current.pop("_odd", None):
        current["unreadable"] = str(fail(problem))
    return current


def _number(digits: str, limit: int, what: str, fail: Any) -> int:
    value = int(digits)
    if value > limit:
        raise fail(f"{what} {digits} is out of range (at most {limit})")
    return value


def _check_copies(fields: dict[str, Any], fail: Any) -> None:
    """raid10 copies (near x far) and far-set sizes no larger than the disks."""
    layout = fields.get("raid10_layout")
    if not layout:
        return
    disks = fields.get("raid_disks") or len(fields["members"])
    copies = 1
    for count, kind in re.findall(r"([0-9]+) (near|far|offset|devices per set)", layout):
        value = int(count)
        if value < 1 or value > disks:
            raise fail(f"{count} {kind} is impossible on {disks} disks")
        if kind != "devices per set":
            copies *= value
    if copies > disks:
        raise fail(f"{copies} copies of each chunk are impossible on {disks} disks")


def _check_nesting(arrays: list[dict[str, Any]]) -> None:
    """Arrays over arrays form a forest: an array sits in at most one array, once, never
    inside itself, at most ``bounds.MAX_NESTING`` levels deep. (A disk listed in two arrays
    is only odd, and procfs' own sample does it; an array in two arrays would make every
    walk of the tree branch twice.)"""
    names = {fields["name"] for fields in arrays}
    parent: dict[str, str] = {}
    for fields in arrays:
        number, raw = fields["_line"]
        for member in fields["members"]:
            if member.device not in names:
                continue
            if member.device in parent:
                where = parent[member.device]
                again = "twice" if where == fields["name"] else f"in {where} too"
                raise ParseError(f"array {member.device} is listed {again}", number, raw)
            parent[member.device] = fields["name"]
    for fields in arrays:
        number, raw = fields["_line"]
        chain = [fields["name"]]
        while chain[-1] in parent:
            if parent[chain[-1]] in chain:
                raise ParseError(f"{fields['name']} is inside itself", number, raw)
            chain.append(parent[chain[-1]])
            if len(chain) > bounds.MAX_NESTING:
                nesting = " in ".join(chain)
                raise ParseError(
                    f"arrays nested more than {bounds.MAX_NESTING} deep ({nesting})", number, raw
                )


def _status_line(line: str, current: dict[str, Any], fail: Any) -> None:
    """Read one line below an array's header into ``current``; ``_Odd`` if it cannot be read,
    ``ParseError`` (``fail``) if it is beyond a bound."""
    if match := _BLOCKS.fullmatch(line):
        _once(current, "blocks")
        blocks = _number(match.group(1), bounds.MAX_BIGINT, "size", fail)
        pieces = _status_pieces(match.group(2) or "", fail)
        current["blocks"] = blocks
        current.update(pieces)
        _check_copies(current, fail)
    elif match := _PROGRESS.fullmatch(line):
        _once(current, "sync")
        current["sync"] = _running(match, fail)
    elif match := _WAITING.fullmatch(line):
        _once(current, "sync")
        if match.group(1) not in SYNC_ACTIONS:
            raise _Odd(f"unknown sync action {match.group(1)!r}")
        current["sync"] = Sync(action=match.group(1), state=match.group(2))
    elif match := _BITMAP.fullmatch(line):
        _once(current, "bitmap")
        current["bitmap"] = Bitmap(*(int(g) for g in match.groups()))
    else:
        raise _Odd("unreadable line")


def _once(current: dict[str, Any], key: str) -> None:
    if key in current:
        raise _Odd(f"second {key} line for {current['name']}")


def _personalities(rest: str, fail: Any) -> tuple[str, ...]:
    names = []
    for token in rest.split():
        if not (token.startswith("[") and token.endswith("]") and len(token) > 2):
            raise fail(f"unreadable personality {token!r}")
        names.append(token[1:-1])
    return tuple(names)


def _odd_header(name: str) -> dict[str, Any]:
    """A line that starts with an array's name but is no header Vigil can read."""
    return {"name": name, "state": "", "members": (), "_odd": "unreadable array header"}


def _header(match: re.Match[str], fail: Any) -> dict[str, Any]:
    """The header's fields; the first oddity (an unknown state word, level or member) is
    kept as ``_odd`` and the rest is still read, within the bounds (``fail``)."""
    word = match.group(2)
    fields: dict[str, Any] = {"name": match.group(1), "state": word[:20]}
    odd: list[str] = []
    if word not in MDSTAT_STATES:
        known = ", ".join(sorted(MDSTAT_STATES))
        odd.append(f"state {word[:40]!r} is not one Vigil knows ({known})")
    tokens = (match.group(3) or "").split()
    if tokens and (ro := _READ_ONLY.fullmatch(tokens[0])):
        fields["read_only"] = ro.group(1)
        tokens = tokens[1:]
    if tokens and tokens[0] in LEVELS:
        fields["level"] = tokens[0]
        tokens = tokens[1:]
    elif tokens and "[" not in tokens[0] and fields["state"] != "inactive":
        odd.append(f"unknown level {tokens[0][:40]!r}")
        tokens = tokens[1:]
    if len(tokens) > bounds.MAX_MEMBERS:
        raise fail(f"more than {bounds.MAX_MEMBERS} members")
    members = []
    for token in tokens:
        member = _MEMBER.fullmatch(token)
        if not member:
            odd.append(f"unreadable member {token[:120]!r}")
            continue
        if len(member.group(1)) > bounds.MAX_DEVICE:
            raise fail(f"member device name longer than {bounds.MAX_DEVICE} characters")
        flags = tuple(member.group(3)[1::3])
        role = _number(member.group(2), bounds.MAX_INT, "member number", fail)
        members.append(Member(member.group(1), role, flags))
    fields["members"] = tuple(members)
    if odd:
        fields["_odd"] = odd[0]
    return fields


def _status_pieces(rest: str, fail: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    seen: set[str] = set()
    layout: list[str] = []
    position = 0
    rest = rest.strip(" ")
    while position < len(rest):
        found = next(
            ((kind, m) for kind, p in _STATUS_PIECES if (m := p.match(rest, position))), None
        )
        if found is None:
            raise _Odd(f"unreadable status text {rest[position:][:120]!r}")
        kind, match = found
        if kind in seen or (kind in {"parity", "chunks"} and "chunk" in fields):
            raise _Odd(f"{kind} given twice")
        if kind not in {"copies", "set"}:  # raid10 may print near- and far-copies, a set size
            seen.add(kind)
        if kind == "super":
            fields["super"] = match.group(1)
        elif kind == "parity":
            fields["parity_level"] = int(match.group(1))
            fields["chunk"] = match.group(2)
            fields["algorithm"] = int(match.group(3))
        elif kind == "chunks":
            fields["chunk"] = match.group(1)
        elif kind in {"copies", "set"}:
            layout.append(match.group(0))
        elif kind == "rounding":
            fields["rounding"] = match.group(1)
        else:
            fields["raid_disks"] = _number(match.group(1), bounds.MAX_MEMBERS, "raid disks", fail)
            fields["active_disks"] = _number(
                match.group(2), fields["raid_disks"], "active disks", fail
            )
            fields["status"] = match.group(3)
            if len(match.group(3)) != fields["raid_disks"]:
                raise _Odd("the [U_] string does not match the number of raid disks")
        position = match.end()
        while position < len(rest) and rest[position] == " ":
            position += 1
    if layout:
        fields["raid10_layout"] = " ".join(" ".join(piece.split()) for piece in layout)
    return fields


def _running(match: re.Match[str], fail: Any) -> Sync:
    action, percent, done, total, finish, speed = match.groups()
    if action not in SYNC_ACTIONS:
        raise _Odd(f"unknown sync action {action!r}")
    return Sync(
        action=action,
        state="running",
        percent=float(percent),
        done_blocks=int(done),
        total_blocks=int(total),
        finish_minutes=None if finish is None else float(finish),
        speed_kib_per_sec=None
        if speed is None
        else _number(speed, bounds.MAX_BIGINT, "speed", fail),
    )

"""Parser for what a stopped node's push agent sends: its ``grastate.dat`` and, when the seqno
there is -1, the position recovery found.

The text is grastate.dat as Galera writes it (``# GALERA saved state``, ``version``, ``uuid``,
``seqno``, ``safe_to_bootstrap``) followed by the agent's own lines: ``vigil_recovered_by``
(``galera_recovery`` or ``mysqld --wsrep-recover``) and ``vigil_recovered`` (what that printed:
``--wsrep_start_position=<uuid>:<seqno>`` or ``WSREP: Recovered position: <uuid>:<seqno>``).
Outside text, so bounded and checked: at most ``MAX_BYTES`` characters and ``MAX_LINES`` lines,
a uuid of hex digits, a seqno from -1 to 2**63-1, safe_to_bootstrap 0 or 1, a known recovery
command; anything else is a ``ParseError`` naming the line.

Pure module: no Django, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from apps.galera.parse_wsrep import ParseError

HEADER = "# GALERA saved state"
MAX_BYTES = 4096
MAX_LINES = 40
MAX_SEQNO = 2**63 - 1
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
POSITION = re.compile(
    r"(?:--wsrep_start_position=|WSREP: Recovered position:\s*)"
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):(-?[0-9]{1,19})"
)
RECOVERED_BY = ("galera_recovery", "mysqld --wsrep-recover")
KEYS = ("version", "uuid", "seqno", "safe_to_bootstrap", "cert_index", "vigil_recovered_by")


@dataclass(frozen=True)
class Grastate:
    """A stopped node's saved state; ``recovered_*`` when recovery found its position."""

    uuid: str
    seqno: int
    safe_to_bootstrap: bool | None = None
    recovered_uuid: str | None = None
    recovered_seqno: int | None = None
    recovered_by: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def looks_like_grastate(text: str) -> bool:
    """Whether a pushed text is a stopped node's report rather than wsrep status."""
    return text.lstrip().startswith(HEADER)


def _seqno(value: str, line: int) -> int:
    if not re.fullmatch(r"-?[0-9]{1,19}", value) or not -1 <= int(value) <= MAX_SEQNO:
        raise ParseError(f"line {line}: seqno must be -1 or a whole number up to 2**63-1")
    return int(value)


def parse_grastate(text: str) -> Grastate:
    """The saved state and the recovered position; ``ParseError`` naming what is wrong."""
    if len(text) > MAX_BYTES:
        raise ParseError(f"more than {MAX_BYTES} characters")
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        raise ParseError(f"more than {MAX_LINES} lines")
    if "\x00" in text:
        raise ParseError("a NUL character")
    values: dict[str, tuple[str, int]] = {}
    recovered: tuple[str, int] | None = None
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if not sep:
            raise ParseError(f"line {number}: not 'name: value'")
        if key == "vigil_recovered":
            match = POSITION.search(value)
            if match is None:
                raise ParseError(
                    f"line {number}: no '--wsrep_start_position=uuid:seqno' or "
                    "'WSREP: Recovered position: uuid:seqno'"
                )
            recovered = (match[1], number)
            values["vigil_recovered_seqno"] = (match[2], number)
            continue
        if key not in KEYS:
            raise ParseError(f"line {number}: unknown field {key[:40]!r}")
        if key in values:
            raise ParseError(f"line {number}: {key} given twice")
        values[key] = (value, number)
    if "uuid" not in values or "seqno" not in values:
        raise ParseError("grastate.dat needs uuid and seqno")
    uuid, line = values["uuid"]
    if not UUID.match(uuid):
        raise ParseError(f"line {line}: uuid must be a lower-case hex uuid")
    seqno = _seqno(*values["seqno"])
    safe: bool | None = None
    if "safe_to_bootstrap" in values:
        flag, line = values["safe_to_bootstrap"]
        if flag not in ("0", "1"):
            raise ParseError(f"line {line}: safe_to_bootstrap must be 0 or 1")
        safe = flag == "1"
    by = ""
    if "vigil_recovered_by" in values:
        by, line = values["vigil_recovered_by"]
        if by not in RECOVERED_BY:
            raise ParseError(f"line {line}: vigil_recovered_by must be one of {RECOVERED_BY}")
    recovered_uuid = recovered_seqno = None
    if recovered is not None:
        if not by:
            raise ParseError(f"line {recovered[1]}: a recovered position needs vigil_recovered_by")
        recovered_uuid = recovered[0]
        recovered_seqno = _seqno(*values["vigil_recovered_seqno"])
        if recovered_seqno < 0:  # recovery found no position: as good as none
            recovered_uuid = recovered_seqno = None
    return Grastate(uuid, seqno, safe, recovered_uuid, recovered_seqno, by)

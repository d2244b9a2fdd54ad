"""Parser for Galera's wsrep status: published text forms and live rows, one typed model.

Pure module: no Django, no I/O. ``parse_status(text)`` reads what people paste (the mysql
client's table, its ``-B`` and ``\\G`` forms, with prompts, footers and elisions);
``WsrepStatus.from_rows(rows)`` takes the adapter's ``(name, value)`` rows; both keep only
``wsrep_*`` variables as the same typed facts, None when absent. ``parse_provider_options``
reads pc.weight, evs.suspect_timeout and evs.auto_evict. A node is not trusted: a value out of
what a cluster can be (beyond ``MAX_CLUSTER_SIZE``, ``MAX_VALUE``, ``MAX_ROWS``, not finite,
not storable) is a ``ParseError`` naming it. What each variable means: ``documented.py``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

from apps.galera.documented import PC_WEIGHT_MAX

MAX_CLUSTER_SIZE = 256  # members of one cluster; real ones have 3 to a few dozen
MAX_ROWS = 2000  # wsrep_% rows of one node (MariaDB 11 has about 80)
MAX_VALUE = 16384  # characters of one value (wsrep_incoming_addresses of 256 members fits)
MAX_WEIGHT = PC_WEIGHT_MAX
MAX_QUEUE = 2**31 - 1  # write-sets in a queue: far beyond any real one, and what the DB keeps
MAX_ADDRESS = 300  # characters of a member's address in wsrep_evs_delayed


class ParseError(ValueError):
    """Text that cannot be read as wsrep status; the message names the line."""


@dataclass(frozen=True)
class Delayed:
    """One entry of ``wsrep_evs_delayed``: a member this node has found slow to answer
    (``uuid:address:count``; ``count``: its entries on the delayed list)."""

    uuid: str
    address: str
    count: int


@dataclass(frozen=True)
class WsrepStatus:
    """The wsrep facts of one node. Values keep the server's spelling ("Non_primary")."""

    cluster_size: int | None = None
    cluster_status: str | None = None
    cluster_conf_id: str | None = None  # a string: 18446744073709551615 overflows int64
    cluster_state_uuid: str | None = None
    local_state_uuid: str | None = None
    local_state: int | None = None
    local_state_comment: str | None = None
    ready: str | None = None
    connected: str | None = None
    flow_control_paused: float | None = None
    flow_control_sent: int | None = None
    flow_control_recv: int | None = None
    local_recv_queue_avg: float | None = None
    local_send_queue_avg: float | None = None
    local_index: str | None = None
    incoming_addresses: tuple[str, ...] | None = None
    provider_name: str | None = None
    provider_version: str | None = None
    last_committed: int | None = None
    evs_state: str | None = None
    # Read since issue 24 (not in the shared fixtures' facts: ``READINGS``).
    flow_control_paused_ns: int | None = None  # a counter: nanoseconds paused since start
    flow_control_requested: str | None = None  # "true": this node asks for a pause now
    local_recv_queue: int | None = None  # write-sets waiting to be applied, now
    local_send_queue: int | None = None  # write-sets waiting to be sent, now
    cluster_weight: int | None = None  # sum of pc.weight in the Primary component
    desync_count: int | None = None  # operations holding this node desynced
    gcomm_uuid: str | None = None  # this node's own id, as other nodes' lists name it
    evs_delayed: tuple[Delayed, ...] | None = None
    evs_evict_list: tuple[str, ...] | None = None
    # Every wsrep_* variable as published (lower-case names, raw values).
    variables: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    format: str | None = field(default=None, compare=False)
    elided: bool = field(default=False, compare=False)
    variable_rows: int = field(default=0, compare=False)
    rows_in_set_footer: int | None = field(default=None, compare=False)

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, str]]) -> WsrepStatus:
        """The model from ``(Variable_name, Value)`` rows, e.g. a live SHOW STATUS."""
        located = []
        for i, row in enumerate(rows, 1):
            if i > MAX_ROWS:
                raise ParseError(f"more than {MAX_ROWS} status rows")
            name, value = row
            if not isinstance(name, str) or not isinstance(value, str) or not _NAME.fullmatch(name):
                raise ParseError(
                    f"row {i}: not a status variable row: {_cut(name)!r}, {_cut(value)!r}"
                )
            located.append((f"row {i}", name, value))
        return _build(located, format=None, elided=False, footer=None)

    def as_facts(self) -> dict[str, Any]:
        """The facts in the fixtures' JSON shape (lists, not tuples)."""
        facts = {name: getattr(self, name) for name in FACTS}
        if self.incoming_addresses is not None:
            facts["incoming_addresses"] = list(self.incoming_addresses)
        return facts

    @property
    def facts(self) -> dict[str, Any]:
        return self.as_facts()

    @property
    def wsrep_rows(self) -> int:
        return len(self.variables)

    @property
    def is_galera(self) -> bool:
        """A wsrep provider is loaded (plain MariaDB shows a few wsrep rows, no provider).

        A published sample whose provider rows were elided still shows a cluster status.
        """
        if self.provider_name is None:
            return self.cluster_status is not None and self.elided
        return bool(self.provider_name)

    @property
    def is_primary(self) -> bool:
        return (self.cluster_status or "").lower() == "primary"

    @property
    def is_ready(self) -> bool:
        return (self.ready or "").upper() == "ON"

    @property
    def is_connected(self) -> bool:
        return (self.connected or "").upper() == "ON"

    @property
    def requests_flow_control(self) -> bool:
        return (self.flow_control_requested or "").strip().lower() == "true"


def _cut(value: object, limit: int = 80) -> object:
    return value[:limit] + "…" if isinstance(value, str) and len(value) > limit else value


def _text(value: str) -> str:
    return value


_INTEGER = re.compile(r"[-+]?[0-9]{1,20}", re.ASCII)
_DECIMAL = re.compile(
    r"[-+]?(?:[0-9]{1,20}(?:\.[0-9]{0,20})?|\.[0-9]{1,20})(?:[eE][-+]?[0-9]{1,3})?", re.ASCII
)


def _integer(low: int, high: int, what: str) -> Callable[[str], int]:
    def convert(value: str) -> int:
        if not _INTEGER.fullmatch(value):
            raise ValueError("is not a number")
        number = int(value)
        if not low <= number <= high:
            raise ValueError(f"is not {what} ({low}..{high})")
        return number

    return convert


def _decimal(low: float, high: float, what: str) -> Callable[[str], float]:
    def convert(value: str) -> float:
        if not _DECIMAL.fullmatch(value):
            raise ValueError("is not a number")
        number = float(value)
        if not math.isfinite(number) or not low <= number <= high:
            raise ValueError(f"is not {what}")
        return number

    return convert


def _addresses(value: str) -> tuple[str, ...]:
    addresses = tuple(part.strip() for part in value.split(",")) if value.strip() else ()
    if len(addresses) > MAX_CLUSTER_SIZE:
        raise ValueError(f"lists more than {MAX_CLUSTER_SIZE} members")
    return addresses


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.ASCII | re.I)


def _uuid(value: str) -> str:
    value = value.strip()
    if not _UUID.fullmatch(value):
        raise ValueError("is not a UUID")
    return value.lower()


def _listed(value: str) -> list[str]:
    parts = [part.strip() for part in value.split(",")] if value.strip() else []
    if len(parts) > MAX_CLUSTER_SIZE:
        raise ValueError(f"lists more than {MAX_CLUSTER_SIZE} members")
    return parts


def _delayed(value: str) -> tuple[Delayed, ...]:
    """``uuid:address:count,...``; the address (``tcp://10.0.0.1:4567``) holds colons."""
    entries = []
    for part in _listed(value):
        uuid, colon, rest = part.partition(":")
        address, colon2, count = rest.rpartition(":")
        if not colon or not colon2:
            raise ValueError(f"entry {_cut(part)!r} is not uuid:address:count")
        if not (count.isascii() and count.isdigit() and len(count) <= 9):
            raise ValueError(f"entry {_cut(part)!r} has no count")
        if len(address) > MAX_ADDRESS or not address.isprintable():
            raise ValueError(f"entry {_cut(part)!r} has no address")
        try:
            uuid = _uuid(uuid)
        except ValueError:
            raise ValueError(f"entry {_cut(part)!r} does not start with a UUID") from None
        entries.append(Delayed(uuid, address, int(count)))
    return tuple(entries)


def _uuids(value: str) -> tuple[str, ...]:
    uuids = []
    for part in _listed(value):
        try:
            uuids.append(_uuid(part))
        except ValueError:
            raise ValueError(f"entry {_cut(part)!r} is not a UUID") from None
    return tuple(uuids)


_COUNT = 2**63 - 1
_CONVERTERS: dict[str, Callable[[str], Any]] = {
    "cluster_size": _integer(0, MAX_CLUSTER_SIZE, "a cluster size"),
    "cluster_status": _text,
    "cluster_conf_id": _text,
    "cluster_state_uuid": _text,
    "local_state_uuid": _text,
    "local_state": _integer(0, 99, "a node state"),
    "local_state_comment": _text,
    "ready": _text,
    "connected": _text,
    "flow_control_paused": _decimal(0.0, 1.0, "a fraction of time (0..1)"),
    "flow_control_sent": _integer(0, _COUNT, "a count"),
    "flow_control_recv": _integer(0, _COUNT, "a count"),
    "local_recv_queue_avg": _decimal(0.0, float(_COUNT), "a queue length"),
    "local_send_queue_avg": _decimal(0.0, float(_COUNT), "a queue length"),
    "local_index": _text,
    "incoming_addresses": _addresses,
    "provider_name": _text,
    "provider_version": _text,
    "last_committed": _integer(-1, _COUNT, "a seqno"),
    "evs_state": _text,
    "flow_control_paused_ns": _integer(0, _COUNT, "a count of nanoseconds"),
    "flow_control_requested": _text,
    "local_recv_queue": _integer(0, MAX_QUEUE, "a queue length"),
    "local_send_queue": _integer(0, MAX_QUEUE, "a queue length"),
    "cluster_weight": _integer(0, MAX_CLUSTER_SIZE * MAX_WEIGHT, "a total of pc.weight"),
    "desync_count": _integer(0, MAX_QUEUE, "a count"),
    "gcomm_uuid": _uuid,
    "evs_delayed": _delayed,
    "evs_evict_list": _uuids,
}
#: Every typed fact, in the model's order.
READ_FACTS: tuple[str, ...] = tuple(f.name for f in fields(WsrepStatus) if f.name in _CONVERTERS)
#: Facts read since issue 24, beyond those of the shared fixtures.
READINGS = (
    "flow_control_paused_ns",
    "flow_control_requested",
    "local_recv_queue",
    "local_send_queue",
    "cluster_weight",
    "desync_count",
    "gcomm_uuid",
    "evs_delayed",
    "evs_evict_list",
)
#: The facts the shared fixtures' JSON records (tests/fixtures/README.md): ``as_facts()``.
FACTS: tuple[str, ...] = tuple(name for name in READ_FACTS if name not in READINGS)
# Values read stripped, an empty one meaning "not reported" (numbers, the node's UUID).
_STRIPPED = {
    name
    for name, convert in _CONVERTERS.items()
    if convert not in (_text, _addresses, _delayed, _uuids)
}

_NAME = re.compile(r"[A-Za-z0-9_]{1,64}", re.ASCII)
_BORDER = re.compile(r"^\+[-+]*\+$")
_FOOTER = re.compile(r"^(\d+) rows? in set\b|^Empty set\b", re.IGNORECASE)
_PROMPT = re.compile(r"^(mysql|mariadb)( \[[^\]]*\])?>|^->", re.IGNORECASE)
_ROW_MARK = re.compile(r"^\*+ \d+\. row \*+$")
_VERTICAL = re.compile(r"^(Variable_name|Value):(?: (.*))?$", re.IGNORECASE)
_ELISION = re.compile(r"^(\.\.\.|…)$")


def _build(
    located: list[tuple[str, str, str]], *, format: str | None, elided: bool, footer: int | None
) -> WsrepStatus:
    variables: dict[str, str] = {}
    where_of: dict[str, str] = {}
    for where, name, value in located:
        lower = name.lower()
        if lower.startswith("wsrep_"):
            if problem := _unstorable(value):
                raise ParseError(f"{where}: {lower} {problem}: {_cut(value)!r}")
            variables[lower] = value
            where_of[lower] = where
    values: dict[str, Any] = {}
    for fact, convert in _CONVERTERS.items():
        raw = variables.get(f"wsrep_{fact}")
        if raw is None or (fact in _STRIPPED and raw.strip() == ""):
            continue
        try:
            values[fact] = convert(raw.strip() if fact in _STRIPPED else raw)
        except ValueError as exc:
            where = where_of[f"wsrep_{fact}"]
            raise ParseError(f"{where}: wsrep_{fact} {exc}: {_cut(raw)!r}") from None
    return WsrepStatus(
        **values,
        variables=MappingProxyType(variables),
        format=format,
        elided=elided,
        variable_rows=len(located),
        rows_in_set_footer=footer,
    )


def _unstorable(value: str) -> str | None:
    if len(value) > MAX_VALUE:
        return f"is longer than {MAX_VALUE} characters"
    if "\x00" in value:
        return "holds a NUL character"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "holds bytes that are not UTF-8 text"
    return None


def parse_status(text: str) -> WsrepStatus:
    """Read a published ``SHOW [GLOBAL] STATUS [LIKE 'wsrep%']`` output."""
    if not isinstance(text, str):
        raise ParseError("line 1: status text must be a string")
    located: list[tuple[str, str, str]] = []
    formats: list[str] = []
    elided = False
    footer: int | None = None
    pending: tuple[str, str] | None = None  # a \G Variable_name waiting for its Value
    for number, raw_line in enumerate(text.splitlines(), 1):
        where = f"line {number}"
        line = raw_line.replace("\u00a0", " ").strip(" \r\n")
        if pending is not None and not _VERTICAL.match(line.strip()):
            raise ParseError(f"{pending[0]}: Variable_name without a Value: {pending[1]!r}")
        if not line.strip() or _BORDER.match(line) or _ROW_MARK.match(line.strip()):
            continue
        stripped = line.strip()
        if _ELISION.match(stripped):
            elided = True
            continue
        if _PROMPT.match(stripped):
            continue
        if match := _FOOTER.match(stripped):
            footer = int(match.group(1)) if match.group(1) else 0
            continue
        if stripped.startswith("|"):
            name, value = _table_row(stripped, where, raw_line)
            if name == "..." or (name == "" and value == "..."):
                elided = True
                continue
            row_format = "mysql-table"
        elif match := _VERTICAL.match(stripped):
            label, value = match.group(1).lower(), match.group(2) or ""
            if label == "variable_name":
                pending = (where, value.strip())
                continue
            if pending is None:
                raise ParseError(f"{where}: Value without a Variable_name: {raw_line!r}")
            where, name = pending
            pending = None
            row_format = "vertical"
        elif "\t" in line:
            name, _, value = line.strip(" ").partition("\t")
            name = name.strip()
            row_format = "tab-separated"
        else:
            raise ParseError(f"{where}: not a status row: {raw_line!r}")
        if name.lower() == "variable_name" and value.lower() == "value":
            continue  # the header row
        _check_row(where, name, row_format, len(located), formats[0] if formats else None)
        if not formats:
            formats.append(row_format)
        located.append((where, name, value))
    if pending is not None:
        raise ParseError(f"{pending[0]}: Variable_name without a Value: {pending[1]!r}")
    return _build(located, format=formats[0] if formats else None, elided=elided, footer=footer)


def _table_row(stripped: str, where: str, raw_line: str) -> tuple[str, str]:
    """The name and value of a row of the mysql client's table, ``| name | value |``."""
    if not stripped.endswith("|") or len(stripped) < 3 or stripped.count("|") < 3:
        raise ParseError(f"{where}: broken table row: {raw_line!r}")
    name, _, value = stripped[1:-1].partition("|")
    return name.strip(), value.strip()


def _check_row(where: str, name: str, row_format: str, rows: int, first: str | None) -> None:
    """Refuse a row that no status output holds: a name that is no variable's, a row beyond
    ``MAX_ROWS`` (``rows`` were read before it), or a format unlike the ``first`` row's."""
    if not _NAME.fullmatch(name):
        raise ParseError(f"{where}: not a variable name: {_cut(name)!r}")
    if rows >= MAX_ROWS:
        raise ParseError(f"{where}: more than {MAX_ROWS} status rows")
    if first is not None and row_format != first:
        raise ParseError(f"{where}: a {row_format} row after {first} rows")


@dataclass(frozen=True)
class ProviderOptions:
    """The parts of ``wsrep_provider_options`` the quorum arithmetic and the eviction rules
    need."""

    pc_weight: int | None = None
    evs_suspect_timeout: float | None = None  # seconds
    evs_auto_evict: int | None = None  # delayed entries before eviction; 0: never
    options: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)


_DURATION = re.compile(
    r"^P(?:(?P<days>\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(?P<hours>\d+(?:\.\d+)?)H)?(?:(?P<minutes>\d+(?:\.\d+)?)M)?"
    r"(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?$",
    re.IGNORECASE,
)


def parse_duration(value: str) -> float:
    """Seconds in a Galera duration: ISO-8601 (``PT5S``, ``PT1M30S``) or plain seconds."""
    text = value.strip()
    match = _DURATION.fullmatch(text) if len(text) <= 100 else None
    if match and text.upper() not in ("P", "PT") and any(match.groupdict().values()):
        parts = {k: float(v) for k, v in match.groupdict().items() if v}
        seconds = (
            parts.get("days", 0.0) * 86400
            + parts.get("hours", 0.0) * 3600
            + parts.get("minutes", 0.0) * 60
            + parts.get("seconds", 0.0)
        )
        if not math.isfinite(seconds):
            raise ParseError(f"not a duration: {_cut(value)!r}")
        return seconds
    if not _DECIMAL.fullmatch(text):
        raise ParseError(f"not a duration: {_cut(value)!r}")
    seconds = float(text)
    if not math.isfinite(seconds) or seconds < 0:  # NaN, infinite or negative
        raise ParseError(f"not a duration: {_cut(value)!r}")
    return seconds


def parse_provider_options(text: str) -> ProviderOptions:
    """Read ``wsrep_provider_options`` (``base_port = 4567; pc.weight = 1; ...``)."""
    options: dict[str, str] = {}
    if len(text) > 16 * MAX_VALUE:
        raise ParseError(f"longer than {16 * MAX_VALUE} characters")
    for number, piece in enumerate(text.split(";"), 1):
        if not piece.strip():
            continue
        name, equals, value = piece.partition("=")
        if not equals or not name.strip():
            raise ParseError(f"option {number}: not 'name = value': {_cut(piece.strip())!r}")
        options[name.strip()] = value.strip()
    weight = options.get("pc.weight")
    timeout = options.get("evs.suspect_timeout")
    pc_weight = None
    if weight not in (None, ""):
        if not (weight.isascii() and weight.isdigit() and int(weight[:6]) <= MAX_WEIGHT):
            raise ParseError(f"pc.weight is not an integer 0..{MAX_WEIGHT}: {_cut(weight)!r}")
        pc_weight = int(weight)
    auto_evict = options.get("evs.auto_evict") or ""
    return ProviderOptions(
        pc_weight=pc_weight,
        evs_suspect_timeout=parse_duration(timeout) if timeout not in (None, "") else None,
        # Only shown beside a delayed count: a value that is not a plain count is left out.
        evs_auto_evict=int(auto_evict)
        if auto_evict.isascii() and auto_evict.isdigit() and len(auto_evict) <= 6
        else None,
        options=MappingProxyType(options),
    )

"""Every parser of outside text, called the way Vigil calls it, reduced to an outcome.

Each target takes the raw bytes of one input and returns ``Outcome(ok, text)``: a result
(``ok``) with a few words on it, or the clear error Vigil answers with. The error types the
parsers promise (``ParseError``, ``BadURL``, a probe's error result) become outcomes; anything
else escapes and fails the caller: that is the point. Results are also checked for values
the database could not store. Shared by the fuzz tests and ``bench/hostile.py``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from apps.alerts.schedule import MAX_MINUTES, Cron, check_cron
from apps.galera.mysql import result_from_rows
from apps.galera.parse_wsrep import ParseError as WsrepError
from apps.galera.parse_wsrep import parse_provider_options, parse_status
from apps.galera.verdict import build_view, cluster_verdict
from apps.probes.keepalive import Measurement, measure
from apps.probes.wire import BadURL, to_wire
from apps.raid import bounds, parse_mdadm
from apps.raid.errors import ParseError
from apps.raid.report import Report, assess

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "hostile"


@dataclass(frozen=True)
class Outcome:
    ok: bool
    text: str

    def __str__(self) -> str:
        return f"result: {self.text}" if self.ok else f"error: {self.text}"


def decoded(data: bytes) -> str:
    """Bytes as Vigil decodes a host's output (SSH and push alike): UTF-8, undecodable bytes
    kept as lone surrogates for the parser to point at."""
    return data.decode("utf-8", errors="surrogateescape")


def storable(text: str, limit: int | None = None) -> bool:
    if limit is not None and len(text) > limit:
        return False
    return bounds.unstorable(text) is None


def check_report(report: Report) -> None:
    """Every value ingest would store fits its column: else the database would refuse it."""
    for a in report.arrays:
        assert storable(a.name, bounds.MAX_NAME) and storable(a.level, 20)
        assert storable(a.state, 20) and storable(a.read_only, 20)
        assert storable(a.array_state, 20)
        assert storable(a.disk_status, 300) and storable(a.sync_action, 20)
        assert storable(a.sync_state, 20)
        assert storable(a.headroom_text, 500) and storable(a.domain_headroom_text, 1000)
        assert storable(a.verdict.reason)
        for number in (a.raid_disks, a.active_disks, a.headroom, a.domain_headroom):
            assert number is None or 0 <= number <= bounds.MAX_INT
        for number in (a.size_kib, a.speed_kib_per_sec):
            assert number is None or 0 <= number <= bounds.MAX_BIGINT
        for m in a.members:
            assert storable(m.device, bounds.MAX_DEVICE) and storable(m.flags, 10)
            assert storable(m.state, bounds.MAX_STATE) and storable(m.domain, 200)
            assert 0 <= m.role <= bounds.MAX_INT
            assert m.slot is None or 0 <= m.slot <= bounds.MAX_INT
    for text in report.detail_texts.values():
        assert storable(text)


def _report(report: Report) -> Outcome:
    check_report(report)
    judged = "; too large to judge" if report.too_large else ""
    return Outcome(True, f"{len(report.arrays)} arrays{judged}")


def mdstat(data: bytes) -> Outcome:
    try:
        return _report(assess(decoded(data)))
    except ParseError as error:
        return Outcome(False, str(error))


def detail(data: bytes) -> Outcome:
    try:
        parsed = parse_mdadm.parse(decoded(data))
    except ParseError as error:
        return Outcome(False, str(error))
    for member in parsed.members:
        assert storable(member.state, bounds.MAX_STATE)
        assert member.raid_device is None or 0 <= member.raid_device <= bounds.MAX_INT
    return Outcome(True, f"{len(parsed.members)} members")


def report(data: bytes) -> Outcome:
    """A JSON case: ``{"mdstat", "details", "rules", "noun", "sysfs"}``, judged as ingest
    judges it."""
    case = json.loads(data)
    try:
        judged = assess(
            case["mdstat"],
            case.get("details"),
            case.get("rules"),
            case.get("noun", "domain"),
            sysfs=case.get("sysfs"),
        )
    except ParseError as error:
        return Outcome(False, str(error))
    return _report(judged)


def wsrep(data: bytes) -> Outcome:
    """The wsrep path: the text read, turned into a node's result, the cluster judged."""
    try:
        status = parse_status(decoded(data))
    except WsrepError as error:
        return Outcome(False, str(error))
    rows = list(status.variables.items())
    result = result_from_rows("node", rows, [])
    verdict = cluster_verdict(build_view([result]))
    assert storable(verdict.reason)
    json.dumps(verdict.figures, allow_nan=False)  # PostgreSQL's jsonb takes no NaN
    if result.error:
        return Outcome(False, result.error)
    return Outcome(True, f"{verdict.status.value}: {verdict.reason[:60]}")


def options(data: bytes) -> Outcome:
    try:
        parsed = parse_provider_options(decoded(data))
    except WsrepError as error:
        return Outcome(False, str(error))
    assert parsed.pc_weight is None or 0 <= parsed.pc_weight <= 255
    return Outcome(True, f"{len(parsed.options)} options")


_HOST = re.compile(r"[a-z0-9_.-]+|[0-9a-f:.]+", re.ASCII)


def url(data: bytes) -> Outcome:
    try:
        wire = to_wire(decoded(data))
    except BadURL as error:
        return Outcome(False, str(error))
    request = f"GET {wire.target} HTTP/1.1\r\nHost: {wire.host_header}\r\n"
    assert request.isascii() and request.count("\r\n") == 2 and " " not in wire.target
    assert _HOST.fullmatch(wire.host) and _HOST.fullmatch(wire.server_name)
    return Outcome(True, f"{wire.host} {wire.target[:60]}")


async def _probe_server(data: bytes) -> Measurement:
    """A loopback server that answers any request with ``data`` and closes."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(data)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        return await measure(f"http://127.0.0.1:{port}/", timeout_s=2.0, cap_s=1.0)
    finally:
        server.close()


def http(data: bytes) -> Outcome:
    """The probe's HTTP reader against a server that sends ``data`` and closes."""
    measurement = asyncio.run(_probe_server(data))
    assert not (measurement.error or "").startswith("probe failed"), measurement.error
    for value in (measurement.advertised_timeout_s, measurement.idle_timeout_s):
        assert value is None or 0 <= value < 1e9
    if measurement.error:
        return Outcome(False, measurement.error)
    return Outcome(True, f"HTTP {measurement.status_code}")


#: The night Berlin's clocks go forward (02:00 is 03:00): a window's hardest hour.
CRON_NOW = datetime(2026, 3, 29, 0, 30, tzinfo=UTC)


def cron(data: bytes) -> Outcome:
    """A maintenance window's cron field as the model's ``clean`` reads it, and, when it is
    one, the window's occurrences as the alert path asks for them (open now, the next, the
    timeline's), for the longest window, in a zone with a change of offset."""
    text = decoded(data)
    if problem := check_cron(text):
        return Outcome(False, problem)
    rule = Cron(" ".join(text.split()), MAX_MINUTES, "Europe/Berlin")
    rule.open_at(CRON_NOW)
    rule.occurrences(CRON_NOW, back_days=1, ahead_days=1)
    found = rule.next_open(CRON_NOW)
    assert found is not None and found[0] < found[1]
    return Outcome(True, f"next opens {found[0]:%Y-%m-%d %H:%M} UTC")


TARGETS: dict[str, Callable[[bytes], Outcome]] = {
    "mdstat": mdstat,
    "detail": detail,
    "report": report,
    "wsrep": wsrep,
    "options": options,
    "url": url,
    "http": http,
    "cron": cron,
}


def corpus(kind: str | None = None) -> list[Path]:
    """The corpus files of one kind (the part of the name before ``--``), or all."""
    files = sorted(p for p in CORPUS.iterdir() if "--" in p.name)
    return [p for p in files if kind is None or p.name.split("--")[0] == kind]


def expectations() -> dict[str, str]:
    """``{file name: expected outcome}`` from the corpus README's table."""
    found = {}
    for line in (CORPUS / "README.md").read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`") and "--" in cells[0]:
            found[cells[0].strip("`")] = cells[2].strip("`")
    return found

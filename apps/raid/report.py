"""One host's report, read and judged as a whole before anything is stored.

Pure module: no Django, no I/O. ``assess(mdstat_text, details, rules)`` parses /proc/mdstat and
every ``mdadm --detail`` text (raising ``ParseError`` for the first unreadable line, with the
source named in the message), builds the host's ``Topology`` with its failure-domain rules,
and returns per array its facts, members, verdict and headroom in numbers and words. The
database glue (``apps/raid/ingest.py``) only copies this into rows, so a malformed report
changes nothing.

Beyond ``health.array_verdict``: when the host has failure-domain rules and an array that
was built to survive failures is otherwise ok but one failure domain alone would stop it
(two mirror halves on the same storage server), it is a **warning** saying which domain.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from apps.lib.status import Status, Verdict
from apps.raid import mdadm_detail, mdstat
from apps.raid.errors import ParseError
from apps.raid.health import host_verdicts
from apps.raid.topology import Topology, describe_domains, describe_headroom

from .domains import domain_map

__all__ = ["ArrayFacts", "MemberFacts", "Report", "assess", "parse_details"]


@dataclass(frozen=True)
class MemberFacts:
    device: str
    role: int  # the number in brackets in /proc/mdstat (descriptor number)
    slot: int | None  # RaidDevice from mdadm --detail, when it was collected
    flags: str  # "F", "S", "W", "R" letters
    state: str  # in words: "in sync", "faulty", "spare", "rebuilding", ...
    domain: str  # from the host's rules; "" when no rule matched
    is_array: bool


@dataclass(frozen=True)
class ArrayFacts:
    name: str
    position: int
    parent: str | None
    level: str
    state: str
    read_only: str
    raid_disks: int | None
    active_disks: int | None
    size_kib: int | None
    disk_status: str  # the "[UU_]" string
    sync_action: str
    sync_state: str
    sync_percent: float | None
    speed_kib_per_sec: int | None
    eta_minutes: float | None
    stalled: bool | None
    headroom: int | None  # further leaf-disk failures survived, worst case; None if stopped
    headroom_text: str
    domain_headroom: int | None  # failure domains that may all fail; None without rules
    domain_headroom_text: str
    members: tuple[MemberFacts, ...]
    verdict: Verdict


@dataclass(frozen=True)
class Report:
    mdstat: mdstat.Mdstat
    details: dict[str, mdadm_detail.Detail]
    arrays: tuple[ArrayFacts, ...]


def _from(source: str, exc: ParseError) -> ParseError:
    """The same error, its message naming the text it came from: "/proc/mdstat, line 3: …"."""
    named = ParseError(exc.problem, exc.line_number, exc.line)
    named.source = source  # type: ignore[attr-defined]
    named.args = (f"{source}, line {exc.line_number}: {exc.problem}: {exc.line!r}",)
    return named


def parse_details(texts: Mapping[str, str] | None) -> dict[str, mdadm_detail.Detail]:
    """``{"md0" or "/dev/md0": text}`` -> ``{"md0": Detail}``; ParseError names the array."""
    parsed: dict[str, mdadm_detail.Detail] = {}
    for key, text in (texts or {}).items():
        name = str(key).removeprefix("/dev/")
        if not text.strip():
            continue  # mdadm printed nothing (the array stopped meanwhile): no detail
        try:
            parsed[name] = mdadm_detail.parse(text)
        except ParseError as exc:
            raise _from(f"mdadm --detail {name}", exc) from exc
    return parsed


def assess(
    mdstat_text: str,
    details: Mapping[str, str] | None = None,
    rules: Mapping[str, str] | None = None,
    noun: str = "failure domain",
) -> Report:
    """Read and judge one host's report; raise ParseError before anything else happens."""
    try:
        parsed = mdstat.parse(mdstat_text)
    except ParseError as exc:
        raise _from("/proc/mdstat", exc) from exc
    found = parse_details(details)
    known = {a.name for a in parsed.arrays}
    found = {name: detail for name, detail in found.items() if name in known}
    topology = Topology(parsed, found)
    verdicts = host_verdicts(parsed, found)
    leaves = {m.device for a in parsed.arrays for m in a.members if m.device not in known}
    mapping = domain_map(sorted(leaves), rules or {})
    parents = {m.device: a.name for a in parsed.arrays for m in a.members if m.device in known}
    arrays = tuple(
        _array_facts(
            position,
            array,
            found.get(array.name),
            topology,
            verdicts[array.name],
            parents.get(array.name),
            mapping if rules else None,
            noun,
        )
        for position, array in enumerate(parsed.arrays)
    )
    return Report(mdstat=parsed, details=found, arrays=arrays)


def _array_facts(
    position: int,
    array: mdstat.Array,
    detail: mdadm_detail.Detail | None,
    topology: Topology,
    verdict: Verdict,
    parent: str | None,
    mapping: dict[str, str] | None,
    noun: str,
) -> ArrayFacts:
    headroom = topology.headroom(array.name)
    domain_count: int | None = None
    domain_text = ""
    if mapping is not None and headroom.running:
        domains = topology.domain_headroom(array.name, mapping)
        domain_count = domains.survivable
        domain_text = describe_domains(domains, noun)
        if verdict.status is Status.OK and headroom.redundant_by_design and domains.fatal_alone:
            alone = ", ".join(domains.fatal_alone)
            verdict = replace(
                verdict,
                status=Status.WARNING,
                reason=f"{array.name}: losing {noun} {alone} alone would stop it",
            )
    figures: dict[str, Any] = dict(verdict.figures)
    figures["domain_headroom"] = domain_count
    sync = array.sync
    return ArrayFacts(
        name=array.name,
        position=position,
        parent=parent,
        level=array.level or "",
        state=array.state,
        read_only=array.read_only or "",
        raid_disks=array.raid_disks,
        active_disks=array.active_disks,
        size_kib=array.blocks,
        disk_status=array.status or "",
        sync_action=sync.action if sync else "",
        sync_state=sync.state if sync else "",
        sync_percent=figures.get("sync_percent"),
        speed_kib_per_sec=figures.get("speed_kib_per_sec"),
        eta_minutes=figures.get("eta_minutes"),
        stalled=figures.get("stalled"),
        headroom=headroom.more_failures if headroom.running else None,
        headroom_text=describe_headroom(headroom),
        domain_headroom=domain_count,
        domain_headroom_text=domain_text,
        members=_members(array, detail, topology, mapping or {}),
        verdict=replace(verdict, figures=figures),
    )


def _members(
    array: mdstat.Array,
    detail: mdadm_detail.Detail | None,
    topology: Topology,
    mapping: dict[str, str],
) -> tuple[MemberFacts, ...]:
    node = topology.nodes[array.name]
    working = {device for _, device in node.working}
    rows = {m.name: m for m in detail.members if m.name} if detail else {}
    rebuilding = array.sync is not None and array.sync.action == "recovery"
    out = []
    for member in array.members:
        row = rows.get(member.device)
        if row is not None and row.state:
            state = row.state
        elif member.faulty:
            state = "faulty"
        elif member.spare:
            state = "spare"
        elif not node.running:
            state = "array not running"
        elif member.device in working and member.device in topology.nodes:
            child = topology.nodes[member.device]
            state = "in sync, degraded" if child.dead_slots else "in sync"
        elif member.device in working:
            state = "in sync"
        else:
            state = "rebuilding" if rebuilding else "not in sync"
        out.append(
            MemberFacts(
                device=member.device,
                role=member.role,
                slot=row.raid_device if row else None,
                flags="".join(member.flags),
                state=state,
                domain=mapping.get(member.device, ""),
                is_array=member.device in topology.nodes,
            )
        )
    return tuple(out)

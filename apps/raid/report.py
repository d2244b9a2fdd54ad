"""One host's report, read and judged as a whole before anything is stored.

Pure module: no Django, no I/O. ``assess(mdstat_text, details, rules)`` parses /proc/mdstat and
every ``mdadm --detail`` text (raising ``ParseError`` for the first unreadable line, with the
source named in the message), builds the host's ``Topology`` with its failure-domain rules,
and returns per array its facts, members, verdict and headroom in numbers and words. The
database glue (``apps/raid/collect.py``) only copies this into rows, so a malformed report
changes nothing.

Beyond ``verdict.array_verdict``: when the host has failure-domain rules and an array that
was built to survive failures is otherwise ok but one failure domain alone would stop it
(two mirror halves on the same storage server), it is a **warning** saying which domain.

Only the ``mdadm --detail`` texts of arrays that /proc/mdstat lists are read and kept. The
whole judgement of one report (headroom of every array first, then the failure-domain
searches) spends one ``bounds.Budget``: what does not fit is "too large to judge", with the
verdict what the text says plainly (``verdict.unjudged_verdict``), unknown rather than ok.
Texts are cut to what their columns hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from apps.lib.status import Status, Verdict
from apps.raid import parse_mdadm, parse_mdstat
from apps.raid.bounds import Budget, TooLarge
from apps.raid.errors import ParseError, quoted
from apps.raid.topology import ArrayHeadroom, Topology, describe_domains, describe_headroom
from apps.raid.verdict import TOO_LARGE, array_verdict, unjudged_verdict

from .domains import domain_map

__all__ = ["ArrayFacts", "MemberFacts", "Report", "assess", "parse_details"]

HEADROOM_TEXT = 500  # the columns' lengths (models.Array)
DOMAIN_TEXT = 1000
REASON_TEXT = 2000


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


#: The facts an ``Array`` row copies from ``ArrayFacts`` (its columns of the same names): the
#: one list that ingest, the API and the synthetic fleet share.
ARRAY_FACT_FIELDS = tuple(
    f.name for f in fields(ArrayFacts) if f.name not in {"name", "parent", "members", "verdict"}
)


@dataclass(frozen=True)
class Report:
    mdstat: parse_mdstat.Mdstat
    details: dict[str, parse_mdadm.Detail]
    arrays: tuple[ArrayFacts, ...]
    detail_texts: dict[str, str]  # the mdadm --detail texts kept: arrays that exist only
    steps: int = 0  # what the judgement spent of its budget
    too_large: bool = False  # the budget ran out: some arrays were not fully judged


def _from(source: str, exc: ParseError) -> ParseError:
    """The same error, its message naming the text it came from: "/proc/mdstat, line 3: …"."""
    named = ParseError(exc.problem, exc.line_number, exc.line)
    named.source = source  # type: ignore[attr-defined]
    named.args = (f"{source}, line {exc.line_number}: {exc.problem}: {quoted(exc.line)}",)
    return named


def parse_details(
    texts: Mapping[str, str] | None, known: set[str] | None = None
) -> dict[str, parse_mdadm.Detail]:
    """``{"md0" or "/dev/md0": text}`` -> ``{"md0": Detail}``; ParseError names the array.

    With ``known``, texts of other arrays are left unread."""
    return {name: detail for name, (detail, _) in _details(texts, known).items()}


def _details(
    texts: Mapping[str, str] | None, known: set[str] | None
) -> dict[str, tuple[parse_mdadm.Detail, str]]:
    parsed: dict[str, tuple[parse_mdadm.Detail, str]] = {}
    for key, text in (texts or {}).items():
        name = str(key).removeprefix("/dev/")
        if (known is not None and name not in known) or not text.strip():
            continue  # another array's, or mdadm printed nothing (the array stopped)
        try:
            parsed[name] = (parse_mdadm.parse(text), text)
        except ParseError as exc:
            raise _from(f"mdadm --detail {name}", exc) from exc
    return parsed


def assess(
    mdstat_text: str,
    details: Mapping[str, str] | None = None,
    rules: Mapping[str, str] | None = None,
    noun: str = "failure domain",
    budget: Budget | None = None,
) -> Report:
    """Read and judge one host's report; raise ParseError before anything else happens."""
    try:
        parsed = parse_mdstat.parse(mdstat_text)
    except ParseError as exc:
        raise _from("/proc/mdstat", exc) from exc
    known = {a.name for a in parsed.arrays}
    read = _details(details, known)
    found = {name: detail for name, (detail, _) in read.items()}
    budget = budget or Budget()
    judged = _judge(parsed, found, budget)
    leaves = {m.device for a in parsed.arrays for m in a.members if m.device not in known}
    mapping: dict[str, str] | None = None
    if rules:
        try:
            budget.spend(len(leaves) * len(rules))
            mapping = domain_map(sorted(leaves), rules)
        except TooLarge:
            mapping = None
    parents = {m.device: a.name for a in parsed.arrays for m in a.members if m.device in known}
    arrays = []
    for position, array in enumerate(parsed.arrays):
        verdict, headroom, topology = judged[array.name]
        arrays.append(
            _array_facts(
                position,
                array,
                found.get(array.name),
                topology,
                headroom,
                verdict,
                parents.get(array.name),
                mapping,
                bool(rules),
                noun,
                known,
            )
        )
    return Report(
        mdstat=parsed,
        details=found,
        arrays=tuple(arrays),
        detail_texts={name: text for name, (_, text) in read.items()},
        steps=budget.spent,
        too_large=budget.exhausted,
    )


def _judge(
    parsed: parse_mdstat.Mdstat, found: dict[str, parse_mdadm.Detail], budget: Budget
) -> dict[str, tuple[Verdict, ArrayHeadroom | None, Topology | None]]:
    """Verdict and headroom of every array, within the budget, before any domain search."""
    judged: dict[str, tuple[Verdict, ArrayHeadroom | None, Topology | None]] = {}
    try:
        topology: Topology | None = Topology(parsed, found, budget)
    except TooLarge:
        topology = None
    for array in parsed.arrays:
        detail = found.get(array.name)
        try:
            if topology is None:
                raise TooLarge
            verdict = array_verdict(array, detail=detail, topology=topology)
            judged[array.name] = (verdict, topology.headroom(array.name), topology)
        except TooLarge:
            judged[array.name] = (unjudged_verdict(array, detail=detail), None, None)
    return judged


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _array_facts(
    position: int,
    array: parse_mdstat.Array,
    detail: parse_mdadm.Detail | None,
    topology: Topology | None,
    headroom: ArrayHeadroom | None,
    verdict: Verdict,
    parent: str | None,
    mapping: dict[str, str] | None,
    has_rules: bool,
    noun: str,
    names: set[str],
) -> ArrayFacts:
    domain_count: int | None = None
    domain_text = ""
    if has_rules and (headroom is None or mapping is None):
        domain_text = f"{array.name}: loss of {noun}s {TOO_LARGE}"
    elif has_rules and topology is not None and headroom is not None and headroom.running:
        try:
            domains = topology.domain_headroom(array.name, mapping or {})
        except TooLarge:
            domain_text = f"{array.name}: loss of {noun}s {TOO_LARGE}"
        else:
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
    if headroom is None:
        headroom_text = f"{array.name}: headroom {TOO_LARGE}"
    else:
        headroom_text = describe_headroom(headroom)
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
        headroom=headroom.more_failures if headroom is not None and headroom.running else None,
        headroom_text=_clip(headroom_text, HEADROOM_TEXT),
        domain_headroom=domain_count,
        domain_headroom_text=_clip(domain_text, DOMAIN_TEXT),
        members=_members(array, detail, topology, mapping or {}, names),
        verdict=replace(verdict, reason=_clip(verdict.reason, REASON_TEXT), figures=figures),
    )


def _members(
    array: parse_mdstat.Array,
    detail: parse_mdadm.Detail | None,
    topology: Topology | None,
    mapping: dict[str, str],
    arrays: set[str],
) -> tuple[MemberFacts, ...]:
    node = topology.nodes[array.name] if topology is not None else None
    working = {device for _, device in node.working} if node is not None else set()
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
        elif node is None:
            state = "not judged"
        elif not node.running:
            state = "array not running"
        elif member.device in working and topology is not None and member.device in arrays:
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
                is_array=member.device in arrays,
            )
        )
    return tuple(out)

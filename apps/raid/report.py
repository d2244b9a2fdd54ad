"""One host's report, read and judged as a whole before anything is stored.

Pure module: no Django, no I/O. ``assess(mdstat_text, details, rules, sysfs=...)`` parses
/proc/mdstat, the ``mdadm --detail`` texts of its arrays, the sysfs words, the disks' smartctl
texts and by-id links, folds them into each array (``evidence.reconcile``), judges the host's
``Topology`` with its failure-domain rules within one ``bounds.Budget``, and returns per array
its facts, members, verdict, headroom, scrubs and advice; ``collect.py`` only copies them into
rows. One array's odd line makes that array (and those above it) unknown; a text that is not
/proc/mdstat, or beyond a bound, raises ``ParseError`` naming its source. What each case
means for the user: docs/raid.md; the layers: docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from functools import cache, partial
from typing import Any

from apps.lib.status import Status, Verdict
from apps.raid import bounds, findings, parse_devlinks, parse_mdadm, parse_mdstat, parse_sysfs
from apps.raid.bounds import Budget, TooLarge
from apps.raid.disks import DiskThresholds, LeafDisk, disk_name, leaf_disks
from apps.raid.errors import ParseError, Refused, quoted
from apps.raid.evidence import Evidence, reconcile
from apps.raid.scrub import ScrubMemory, ScrubThresholds
from apps.raid.thresholds import ArrayThresholds
from apps.raid.topology import ArrayHeadroom, Topology, describe_domains, describe_headroom
from apps.raid.verdict import TOO_LARGE, array_verdict, unjudged_verdict, unreadable_verdict

from .domains import domain_map

__all__ = ["ArrayFacts", "MemberFacts", "Report", "assess"]

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
    state: str  # as the kernel means it: "broken" when array_state or mdadm say so
    array_state: str  # /sys/block/mdX/md/array_state, "" when not sent
    read_only: str
    raid_disks: int | None
    active_disks: int | None
    size_kib: int | None
    disk_status: str  # the "[UU_]" string
    sync_action: str  # "repair" where /proc/mdstat prints "resync" and sync_action says repair
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
    # scrubs (scrub.py): what this reading's sysfs says and what Vigil remembers
    sysfs_sync_action: str = ""
    last_sync_action: str = ""
    mismatch_cnt: int | None = None
    check_ended: datetime | None = None
    check_action: str = ""
    checks_watched_since: datetime | None = None
    scrub_text: str = ""
    advice: list[dict[str, Any]] = field(default_factory=list)  # advice.Advice, as JSON


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
    detail_problems: dict[str, str] = field(default_factory=dict)  # array -> why unreadable
    steps: int = 0  # what the judgement spent of its budget
    too_large: bool = False  # the budget ran out: some arrays were not fully judged
    disks: dict[str, LeafDisk] = field(default_factory=dict)  # "sdc" -> the disk, report order
    smart_texts: dict[str, str] = field(default_factory=dict)  # "sdc" -> smartctl's text, kept


def _from(source: str, exc: ParseError) -> ParseError:
    """The same error, its message naming the text it came from: "/proc/mdstat, line 3: …"."""
    named = ParseError(exc.problem, exc.line_number, exc.line)
    named.source = source  # type: ignore[attr-defined]
    named.args = (f"{source}, line {exc.line_number}: {exc.problem}: {quoted(exc.line)}",)
    return named


def _details(
    texts: Mapping[str, str] | None, known: set[str] | None
) -> tuple[dict[str, tuple[parse_mdadm.Detail, str]], dict[str, str]]:
    """The details read, and why the others could not be (``Refused`` raises: a bound)."""
    parsed: dict[str, tuple[parse_mdadm.Detail, str]] = {}
    problems: dict[str, str] = {}
    for key, text in (texts or {}).items():
        name = str(key).removeprefix("/dev/")
        if (known is not None and name not in known) or not text.strip():
            continue  # another array's, or mdadm printed nothing (the array stopped)
        try:
            parsed[name] = (parse_mdadm.parse(text), text)
        except Refused as exc:
            raise _from(f"mdadm --detail {name}", exc) from exc
        except ParseError as exc:
            problems[name] = str(_from(f"mdadm --detail {name}", exc))
    return parsed, problems


def assess(
    mdstat_text: str,
    details: Mapping[str, str] | None = None,
    rules: Mapping[str, str] | None = None,
    noun: str = "failure domain",
    budget: Budget | None = None,
    sysfs: str | None = None,
    smart: Mapping[str, str] | None = None,
    devlinks: str | None = None,
    thresholds: DiskThresholds | None = None,
    scrubs: Mapping[str, ScrubMemory] | None = None,
    scrub_thresholds: ScrubThresholds | None = None,
    now: datetime | None = None,
    own_thresholds: Callable[[str], ArrayThresholds | None] | None = None,
) -> Report:
    """Read and judge one host's report; raise ParseError before anything else happens.

    ``smart``: the disk name (``sdc``) -> ``smartctl --json -a`` text; ``devlinks``: the
    by-id and by-path lines; ``scrubs``: what was remembered of each array's scrubs, followed
    at ``now`` (the reading's time; without it, scrubs are not judged); ``own_thresholds``
    gives an array's own (a region's or its own set: ``raid/thresholds.py``), or None for
    ``thresholds`` and ``scrub_thresholds``."""
    read_mdstat, read, detail_problems, sysfs_states = _read(mdstat_text, details, sysfs)
    known = {a.name for a in read_mdstat.arrays}
    found = {name: detail for name, (detail, _) in read.items()}
    parsed, evidence = reconcile(read_mdstat, found, sysfs_states)
    budget = budget or Budget()
    parents = {m.device: a.name for a in parsed.arrays for m in a.members if m.device in known}
    gaps = _gaps(parsed, parents, detail_problems)
    judged = _judge(parsed, found, budget, evidence, gaps)
    order = [m.device for a in parsed.arrays for m in a.members if m.device not in known]
    mapping = _domain_mapping(set(order), rules, budget)
    texts, links, disks_under = _smart_and_links(smart, devlinks, order)
    host_thresholds = ArrayThresholds(
        thresholds or DiskThresholds(), scrub_thresholds or ScrubThresholds()
    )
    disks = disks_under(host_thresholds.disk)
    holders = {m.device: a.name for a in parsed.arrays for m in a.members}
    arrays = []
    for facts in _described(parsed, found, judged, parents, evidence, mapping, bool(rules), noun):
        _, headroom, topology, _ = judged[facts.name]
        own = (own_thresholds(facts.name) if own_thresholds else None) or host_thresholds
        facts = _with_disk_findings(
            facts, topology, headroom, disks_under(own.disk), holders, links, noun
        )
        if now is not None:
            facts = _with_scrubs(facts, scrubs, sysfs_states, now, own.scrub)
        arrays.append(facts)
    wanted = read.keys() | detail_problems.keys()
    return Report(
        mdstat=parsed,
        details=found,
        arrays=tuple(arrays),
        detail_texts={name: text for name, text in _texts(details).items() if name in wanted},
        steps=budget.spent,
        too_large=budget.exhausted,
        detail_problems=detail_problems,
        disks=disks,
        smart_texts=texts,
    )


def _described(
    parsed: parse_mdstat.Mdstat,
    found: dict[str, parse_mdadm.Detail],
    judged: dict[str, tuple[Verdict, ArrayHeadroom | None, Topology | None, str]],
    parents: dict[str, str],
    evidence: dict[str, Evidence],
    mapping: dict[str, str] | None,
    has_rules: bool,
    noun: str,
) -> list[ArrayFacts]:
    """Each array's facts as ``_judge`` left them, in /proc/mdstat's order: its lines, members,
    headroom and failure domains, before its disks and scrubs add their findings."""
    known = {a.name for a in parsed.arrays}
    described = []
    for position, array in enumerate(parsed.arrays):
        verdict, headroom, topology, gap = judged[array.name]
        facts = _array_facts(
            position,
            array,
            found.get(array.name),
            topology,
            headroom,
            verdict,
            parents.get(array.name),
            mapping,
            has_rules,
            noun,
            known,
            evidence[array.name],
            gap,
        )
        described.append(facts)
    return described


def _with_scrubs(
    facts: ArrayFacts,
    scrubs: Mapping[str, ScrubMemory] | None,
    sysfs_states: Mapping[str, parse_sysfs.SysfsState],
    now: datetime,
    thresholds: ScrubThresholds,
) -> ArrayFacts:
    """``facts`` with its scrubs judged at ``now``: what was remembered of them, followed by
    what sysfs says of the array's sync action now."""
    memory = (scrubs or {}).get(facts.name, ScrubMemory())
    state = sysfs_states.get(facts.name, parse_sysfs.SysfsState())
    scrub = findings.scrub_fields(facts.verdict, memory, state, now, thresholds, REASON_TEXT)
    return replace(facts, **scrub)


def _read(
    mdstat_text: str, details: Mapping[str, str] | None, sysfs: str | None
) -> tuple[
    parse_mdstat.Mdstat,
    dict[str, tuple[parse_mdadm.Detail, str]],
    dict[str, str],
    dict[str, parse_sysfs.SysfsState],
]:
    """/proc/mdstat, the details of its arrays (and why others could not be read), and their
    sysfs words; a /proc/mdstat that cannot be read raises ``ParseError`` naming it."""
    try:
        read_mdstat = parse_mdstat.parse(mdstat_text)
    except ParseError as exc:
        raise _from("/proc/mdstat", exc) from exc
    known = {a.name for a in read_mdstat.arrays}
    read, detail_problems = _details(details, known)
    return read_mdstat, read, detail_problems, parse_sysfs.parse(sysfs, known)


def _smart_and_links(
    smart: Mapping[str, str] | None, devlinks: str | None, order: list[str]
) -> tuple[
    dict[str, str],
    dict[str, parse_devlinks.Links],
    Callable[[DiskThresholds], dict[str, LeafDisk]],
]:
    """The smartctl texts kept, the disks' links, and the host's disks under the leaf
    devices ``order`` judged by given thresholds (once per distinct set)."""
    texts, readings, problems = findings.read_smart(smart, {disk_name(leaf) for leaf in order})
    links = parse_devlinks.parse(devlinks)
    leaves = list(dict.fromkeys(order))
    judge = partial(leaf_disks, leaves, readings, problems, links, smart_sent=smart is not None)
    return texts, links, cache(judge)


def _domain_mapping(
    leaves: set[str], rules: Mapping[str, str] | None, budget: Budget
) -> dict[str, str] | None:
    """Each leaf device's failure domain by the host's rules; None without rules, or when
    matching them would spend more than the budget has left."""
    if not rules:
        return None
    try:
        budget.spend(len(leaves) * len(rules))
        return domain_map(sorted(leaves), rules)
    except TooLarge:
        return None


def _with_disk_findings(
    facts: ArrayFacts,
    topology: Topology | None,
    headroom: ArrayHeadroom | None,
    disks: dict[str, LeafDisk],
    holders: dict[str, str],
    links: dict[str, parse_devlinks.Links],
    noun: str,
) -> ArrayFacts:
    """``facts`` with what its disks say (``findings.disk_findings``) in its verdict, its
    headroom text and its replacement advice."""
    found_disks, said, advice = findings.disk_findings(
        facts.name, facts.members, topology, headroom, disks, holders, links, noun
    )
    return replace(
        facts,
        verdict=findings.raised(facts.verdict, found_disks, REASON_TEXT),
        headroom_text=_clip(facts.headroom_text + said, HEADROOM_TEXT),
        advice=advice,
    )


def _texts(details: Mapping[str, str] | None) -> dict[str, str]:
    return {str(key).removeprefix("/dev/"): text for key, text in (details or {}).items()}


def _gaps(
    parsed: parse_mdstat.Mdstat, parents: dict[str, str], detail_problems: dict[str, str]
) -> dict[str, str]:
    """Arrays that cannot be fully judged, and why: their own lines or detail could not be
    read, or those of an array below them (the nesting is at most ``bounds.MAX_NESTING``)."""
    gaps: dict[str, str] = {}
    for array in parsed.arrays:
        if array.unreadable is None:
            continue
        above = parents.get(array.name)
        for _ in range(bounds.MAX_NESTING):
            if above is None:
                break
            gaps.setdefault(above, f"member array {array.name} could not be read")
            above = parents.get(above)
    for name, problem in detail_problems.items():
        gaps.setdefault(name, f"its {problem}")
    return gaps


def _judge(
    parsed: parse_mdstat.Mdstat,
    found: dict[str, parse_mdadm.Detail],
    budget: Budget,
    evidence: dict[str, Evidence],
    gaps: dict[str, str],
) -> dict[str, tuple[Verdict, ArrayHeadroom | None, Topology | None, str]]:
    """Verdict and headroom of every array, within the budget, before any domain search; the
    last item says why the headroom is missing ("" when it is not)."""
    judged: dict[str, tuple[Verdict, ArrayHeadroom | None, Topology | None, str]] = {}
    try:
        topology: Topology | None = Topology(parsed, found, budget)
    except TooLarge:
        topology = None
    for array in parsed.arrays:
        detail = found.get(array.name)
        seen = evidence[array.name]
        if array.unreadable is not None:
            judged[array.name] = (unreadable_verdict(array), None, None, "unknown")
            continue
        if array.name in gaps and not gaps[array.name].startswith("its "):
            why = gaps[array.name]
            verdict = unjudged_verdict(array, detail=detail, evidence=seen, gap=why)
            judged[array.name] = (verdict, None, None, f"unknown ({why})")
            continue
        try:
            if topology is None:
                raise TooLarge
            verdict = array_verdict(array, detail=detail, topology=topology, evidence=seen)
            judged[array.name] = (verdict, topology.headroom(array.name), topology, "")
        except TooLarge:
            verdict = unjudged_verdict(array, detail=detail, evidence=seen)
            judged[array.name] = (verdict, None, None, TOO_LARGE)
        if array.name in gaps:  # its mdadm --detail could not be read: never ok
            verdict, *rest = judged[array.name]
            status = Status.UNKNOWN if verdict.status is Status.OK else verdict.status
            reason = f"{verdict.reason}; {gaps[array.name]}"
            judged[array.name] = (replace(verdict, status=status, reason=reason), *rest)
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
    evidence: Evidence,
    gap: str,
) -> ArrayFacts:
    domain_count, domain_text, verdict = _domain_headroom(
        array, topology, headroom, verdict, mapping, has_rules, noun, gap
    )
    figures: dict[str, Any] = dict(verdict.figures)
    figures["domain_headroom"] = domain_count
    sync = array.sync
    headroom_text = _headroom_text(array, headroom, gap)
    return ArrayFacts(
        name=array.name,
        position=position,
        parent=parent,
        level=array.level or "",
        state=array.state,
        array_state=evidence.sysfs.array_state or "",
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


def _domain_headroom(
    array: parse_mdstat.Array,
    topology: Topology | None,
    headroom: ArrayHeadroom | None,
    verdict: Verdict,
    mapping: dict[str, str] | None,
    has_rules: bool,
    noun: str,
    gap: str,
) -> tuple[int | None, str, Verdict]:
    """How many failure domains the array survives losing and in words (None and "" without
    rules), and its verdict, a warning when one domain alone would stop an array built to
    survive failures."""
    domain_count: int | None = None
    domain_text = ""
    if has_rules and headroom is None:
        domain_text = f"{array.name}: loss of {noun}s {gap or TOO_LARGE}"
    elif has_rules and mapping is None:
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
    return domain_count, domain_text, verdict


def _headroom_text(array: parse_mdstat.Array, headroom: ArrayHeadroom | None, gap: str) -> str:
    if headroom is None:
        return f"{array.name}: headroom {gap or TOO_LARGE}"
    if array.state == "broken":
        return f"{array.name} is broken: md fails its writes"
    return describe_headroom(headroom)


def lost_domain(
    members: Iterable[MemberFacts], below: Mapping[str, Iterable[MemberFacts]] | None = None
) -> str | None:
    """The one failure domain every lost disk under an array is in (its storage server), or
    None: nothing lost, a disk outside the rules, or losses in several domains. ``below``:
    the members of the arrays it is built on (a RAID-0 over RAID-10s), by array name."""
    lost = _lost_domains(members, below or {}, depth=0)
    return next(iter(lost)) if len(lost) == 1 and "" not in lost else None


def _lost_domains(
    members: Iterable[MemberFacts], below: Mapping[str, Iterable[MemberFacts]], depth: int
) -> set[str]:
    lost: set[str] = set()
    for m in members:
        if m.is_array:
            if depth < 8 and m.device in below:
                lost |= _lost_domains(below[m.device], below, depth + 1)
        elif (
            "F" in m.flags or m.state.startswith(("faulty", "removed")) or m.state == "not in sync"
        ):
            lost.add(m.domain)
    return lost


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

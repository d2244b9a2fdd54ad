"""What the disks and the scrubs add to an array's judgement (``report.assess`` calls these).

Pure module: no Django, no I/O. ``read_smart`` reads the smartctl texts of the disks under
the arrays (one disk's unreadable text makes only that disk unknown); ``disk_findings`` names
an array's failing disks in its verdict and headroom, a **warning** while the array survives
their loss (with what it can lose then), **critical** when losing them would stop it, and
writes the replacement advice for its failed or failing members (``advice.py``);
``scrub_fields`` follows its scrubs (``scrub.py``). ``raised`` adds findings to a verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from apps.lib.status import Status, Verdict
from apps.raid import bounds, parse_smartctl
from apps.raid.advice import advise
from apps.raid.bounds import TooLarge
from apps.raid.disks import LeafDisk, disk_name, label
from apps.raid.parse_devlinks import Links
from apps.raid.parse_sysfs import SysfsState
from apps.raid.scrub import ScrubMemory, ScrubThresholds, follow
from apps.raid.topology import ArrayHeadroom, Topology

__all__ = ["disk_findings", "raised", "read_smart", "scrub_fields"]

Finding = tuple[Status, str]


def read_smart(
    texts: Mapping[str, str] | None, wanted: set[str]
) -> tuple[dict[str, str], dict[str, parse_smartctl.SmartReading], dict[str, str]]:
    """The smartctl texts of the disks in ``wanted`` (others are not read) that can be kept,
    their readings, and why the others could not be read."""
    kept: dict[str, str] = {}
    readings: dict[str, parse_smartctl.SmartReading] = {}
    problems: dict[str, str] = {}
    for key, text in (texts or {}).items():
        name = str(key).removeprefix("/dev/")
        if name not in wanted or not isinstance(text, str):
            continue
        try:
            readings[name] = parse_smartctl.parse(text)
        except parse_smartctl.SmartUnreadable as exc:
            problems[name] = str(exc)
        if bounds.unstorable(text) is None and len(text) <= parse_smartctl.MAX_BYTES:
            kept[name] = text
    return kept, readings, problems


def raised(verdict: Verdict, found: list[Finding], limit: int) -> Verdict:
    """``verdict`` with ``found`` added to its reason (cut at ``limit``) and its status raised
    to the worst of them; an unknown array stays unknown unless one is critical."""
    if not found:
        return verdict
    status = verdict.status
    for level, _ in found:
        if level.severity <= status.severity:
            continue
        if status is Status.UNKNOWN and level is not Status.CRITICAL:
            continue
        status = level
    reason = "; ".join([verdict.reason, *(text for _, text in found)])
    reason = reason if len(reason) <= limit else reason[: limit - 1] + "…"
    return Verdict(status, reason, verdict.figures)


def disk_findings(
    name: str,
    members: tuple[Any, ...],
    topology: Topology | None,
    headroom: ArrayHeadroom | None,
    disks: dict[str, LeafDisk],
    holders: dict[str, str],
    links: dict[str, Links],
    noun: str,
) -> tuple[list[Finding], str, list[dict[str, Any]]]:
    """The findings of the failing disks under array ``name``, what its headroom sentence
    gains ("; sdc (serial …) is failing SMART: pending sectors 24: once it goes, any 1
    more"), and the advice for its members (``report.MemberFacts``) as JSON."""
    failing = {m for disk in disks.values() if disk.health.failing for m in disk.members}
    found: list[Finding] = []
    said = ""
    if topology is not None and headroom is not None and headroom.running and failing:
        try:
            under = sorted(topology.leaves(name) & failing)
            after = topology.headroom_if_lost(name, frozenset(under)) if under else 0
        except TooLarge:
            under, after = [], 0
        if under:
            words = "; ".join(_failing(disks[disk_name(m)], m, name, holders) for m in under)
            goes = "it goes" if len(under) == 1 else "they go"
            if after is None:
                found.append((Status.CRITICAL, f"{words}; {name} stops if {goes}"))
                said = f"; {words}: {name} stops if {goes}"
            else:
                more = f"any {after} more" if after else "nothing more"
                found.append((Status.WARNING, f"{words}; once {goes}, {name} survives {more}"))
                said = f"; {words}: once {goes}, {more}"
    advice = []
    for member in members:
        if member.is_array:
            continue
        disk = disks.get(disk_name(member.device))
        failed = "F" in member.flags or "faulty" in member.state
        if failed or (disk is not None and disk.health.failing):
            advice.append(
                advise(
                    member.device,
                    name,
                    failed,
                    disk,
                    links.get(member.device),
                    member.domain,
                    holders,
                    noun,
                ).as_dict()
            )
    return found, said, advice


def _failing(disk: LeafDisk, member: str, array: str, holders: dict[str, str]) -> str:
    """ "sdc (serial 9RK1XXXX, in md3) is failing SMART: pending sectors 24"."""
    name = label(disk)
    holder = holders.get(member)
    if holder and holder != array:
        name = f"{name[:-1]}, in {holder})" if name.endswith(")") else f"{name} (in {holder})"
    return f"{name} is {disk.health.summary}"


def scrub_fields(
    verdict: Verdict,
    memory: ScrubMemory,
    state: SysfsState,
    now: datetime,
    thresholds: ScrubThresholds,
    limit: int,
) -> dict[str, Any]:
    """The ``ArrayFacts`` fields of the array's scrubs at ``now``, its verdict included."""
    scrub = follow(memory, state, now, thresholds)
    kept = scrub.memory
    return {
        "verdict": raised(verdict, [(scrub.status, text) for text in scrub.findings], limit),
        "sysfs_sync_action": kept.sync_action,
        "last_sync_action": kept.last_sync_action,
        "mismatch_cnt": scrub.mismatch_cnt,
        "check_ended": kept.check_ended,
        "check_action": kept.check_action,
        "checks_watched_since": kept.watched_since,
        "scrub_text": scrub.text,
    }

"""The status of one md array, with the reason a person reads and the figures behind it.

Pure module: no Django, no I/O. ``array_verdict`` turns a parsed /proc/mdstat array (plus,
optionally, its ``mdadm --detail`` and the host's ``Topology``) into a ``Verdict``.

The rules for each status are ``array_verdict``'s; the road from report to status is in
docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apps.lib.formats import duration, kib_per_s
from apps.lib.status import Status, Verdict, worst
from apps.raid.evidence import Evidence, reconcile
from apps.raid.parse_mdadm import Detail
from apps.raid.parse_mdstat import Array, Mdstat
from apps.raid.topology import ArrayHeadroom, Topology, describe_headroom

__all__ = [
    "ABSURD_ETA_MINUTES",
    "array_verdict",
    "duration",
    "host_verdicts",
    "unjudged_verdict",
    "unreadable_verdict",
]

TOO_LARGE = "too large to judge"

ABSURD_ETA_MINUTES = 30 * 24 * 60  # a rebuild "finishing" in more than 30 days is stuck
_REBUILDS = {"recovery", "resync", "reshape"}
_WAITING = {
    "DELAYED": "waits for another array on the same disks",
    "PENDING": "starts on the first write to the array",
    "REMOTE": "runs on another cluster node",
}


def host_verdicts(
    mdstat: Mdstat, details: Mapping[str, Detail] | None = None
) -> dict[str, Verdict]:
    """A verdict for every array of one host, judged with the host's whole tree (unreadable
    arrays, and those above them, are ``report.assess``'s to say)."""
    details = details or {}
    mdstat, evidence = reconcile(mdstat, details)
    topology = Topology(mdstat, details)
    return {
        array.name: unreadable_verdict(array)
        if array.unreadable
        else array_verdict(
            array, detail=details.get(array.name), topology=topology, evidence=evidence[array.name]
        )
        for array in mdstat.arrays
    }


def unreadable_verdict(array: Array) -> Verdict:
    """Unknown, with the line that could not be read: nothing else of it is believed."""
    return Verdict(
        Status.UNKNOWN,
        f"{array.name}: /proc/mdstat {array.unreadable}",
        {"level": array.level, "headroom": None},
    )


def array_verdict(
    array: Array,
    *,
    detail: Detail | None = None,
    topology: Topology | None = None,
    evidence: Evidence | None = None,
) -> Verdict:
    """The status of ``array``; pass the host's ``topology`` to judge nested arrays, and the
    ``evidence`` of ``evidence.reconcile`` to say who called it broken or a repair.

    - **critical**: the array is inactive, broken (the kernel's ``MD_BROKEN``: /proc/mdstat,
      ``array_state`` or ``mdadm --detail`` says ``broken``, a RAID-0 or linear array whose member
      is gone among them), has stopped (``mdadm`` says FAILED, or more members are gone than its
      level or RAID-10 layout survives, even when the kernel still prints ``active``), has a
      failed ``(F)`` member, is degraded, or can lose nothing more although it (or an array below
      it) was built to survive failures. A degraded array that still survives more failures is
      critical all the same, as ``mdadm --monitor`` rates DegradedArray (``kernel.FACTS``): the
      reason says how many it still survives of how many it was built for.
    - **warning**: a recovery, resync or reshape is running (percent and ETA in the reason) or
      waiting (``resync=DELAYED``/``PENDING``); a running one that is stalled (speed 0, or an ETA
      beyond ``ABSURD_ETA_MINUTES``) says so.
    - **ok**: clean, or only a check/repair scrub running. /proc/mdstat prints a user's repair as
      ``resync``: with ``sync_action`` collected it is known as the repair it is
      (``evidence.reconcile``); without it, it is judged as the resync it says.
    - **unknown**: a line of the array could not be read (``unreadable_verdict``, the line in the
      reason), or its headroom could not be worked out (``unjudged_verdict``).

    RAID-0 and linear arrays "can lose nothing more" by nature. A plain RAID-0 over disks was
    built that way and is **ok** while all its members are up, otherwise it would be critical
    every day; the reason says "no redundancy by design". A RAID-0 over arrays (the seed's md99)
    is judged by its tree: critical when the arrays below it, built to survive failures, leave no
    headroom (e.g. a three-way mirror below it is down to its last copy).

    ``figures`` carries numbers, never only text: ``headroom`` (leaf-disk failures it survives,
    worst case), ``sync_action``, ``sync_percent``, ``speed_kib_per_sec``, ``eta_minutes``,
    ``stalled``, ``raid_disks``, ``active_disks``, ``failed_members``.

    When the headroom search is over its budget (``bounds.TooLarge``), ``unjudged_verdict`` says
    what can be said without it (inactive, failed members, degraded, a rebuild) and otherwise
    **unknown**: "too large to judge", never ok.
    """
    evidence = evidence or Evidence()
    if topology is None or array.name not in topology.nodes:
        lone = Mdstat(personalities=(), arrays=(array,), unused_devices=None)
        topology = Topology(lone, {array.name: detail} if detail else None)
    headroom = topology.headroom(array.name)
    figures = _figures(array, evidence, headroom.more_failures if headroom.running else None)
    findings: list[tuple[Status, str]] = []
    findings += _plain_findings(array, detail, evidence, stopped=not headroom.running)
    findings += _state_findings(headroom, topology)
    findings += _sync_findings(array, detail, figures, evidence)
    if not findings:
        return Verdict(Status.OK, _healthy_reason(array, headroom, evidence), figures)
    status = worst(s for s, _ in findings) or Status.OK
    findings.sort(key=lambda f: -f[0].severity)
    reason = "; ".join(text for _, text in findings)
    if status is not Status.OK and headroom.running and headroom.more_failures > 0:
        reason += f"; {_still(headroom, status)}"
    return Verdict(status, f"{array.name}: {reason}", figures)


def _figures(array: Array, evidence: Evidence, headroom: int | None) -> dict[str, Any]:
    """The figures every verdict of ``array`` carries, ``headroom`` its leaf-disk failures
    survived (None when not worked out); the sync figures are added as they are found."""
    return {
        "level": array.level,
        "raid_disks": array.raid_disks,
        "active_disks": array.active_disks,
        "failed_members": array.failed_members,
        "headroom": headroom,
        "array_state": evidence.sysfs.array_state,
    }


def _still(headroom: ArrayHeadroom, status: Status) -> str:
    """What a failing array can still lose, and, when it is critical with failures to spare,
    what it was built for: the reason a critical array that "survives 1 more" is critical."""
    survives = describe_headroom(headroom).removeprefix(headroom.array + " ")
    built = headroom.designed_tolerance
    if status is Status.CRITICAL and headroom.more_failures < built:
        return f"still {survives}, short of the {built} it was built to survive"
    return survives


def unjudged_verdict(
    array: Array,
    *,
    detail: Detail | None = None,
    why: str = "",
    evidence: Evidence | None = None,
    gap: str = "",
) -> Verdict:
    """The status of ``array`` when its headroom could not be worked out, within the budget
    or because an array below it could not be read (``gap`` says so): what the text says
    plainly, and unknown rather than ok."""
    evidence = evidence or Evidence()
    figures = _figures(array, evidence, headroom=None)
    findings = _plain_findings(array, detail, evidence) + _sync_findings(
        array, detail, figures, evidence
    )
    if gap:
        missing = f"headroom unknown: {gap}"
    else:
        missing = f"headroom {TOO_LARGE}" + (f" ({why})" if why else "")
    status = worst(s for s, _ in findings) or Status.UNKNOWN
    findings.sort(key=lambda f: -f[0].severity)
    reasons = [text for _, text in findings if text] + [missing]
    return Verdict(status, f"{array.name}: {'; '.join(reasons)}", figures)


def _plain_findings(
    array: Array, detail: Detail | None, evidence: Evidence, stopped: bool = False
) -> list[tuple[Status, str]]:
    """What the text says (inactive, broken, failed, degraded), and ``stopped`` by the
    search."""
    found: list[tuple[Status, str]] = []
    flags = {flag.lower() for flag in detail.state_flags} if detail else set()
    if array.state == "inactive":
        found.append((Status.CRITICAL, "inactive (not running)"))
    elif array.state == "broken":
        found.append((Status.CRITICAL, _broken(array, evidence)))
    elif "failed" in flags or stopped:
        found.append((Status.CRITICAL, "stopped: more members lost than its layout survives"))
    if array.failed_members:
        found.append((Status.CRITICAL, f"failed member {', '.join(array.failed_members)}"))
    if array.degraded and array.state == "active":
        found.append(
            (
                Status.CRITICAL,
                f"degraded: {array.active_disks} of {array.raid_disks} members in sync "
                f"[{array.status}]",
            )
        )
    return found


def _broken(array: Array, evidence: Evidence) -> str:
    """Why a broken array is broken, and who said so (``kernel.FACTS["md-broken"]``)."""
    said = ", ".join(evidence.broken_by or ("/proc/mdstat",)).replace(
        "mdadm --detail", "mdadm: State : broken"
    )
    if array.level in {"raid0", "linear"}:
        return f"broken ({said}): a member is gone and md fails writes to it"
    return f"broken ({said}): md marks it failed and fails writes to it"


def _state_findings(headroom: ArrayHeadroom, topology: Topology) -> list[tuple[Status, str]]:
    """What the headroom search adds: no headroom left here or below."""
    found: list[tuple[Status, str]] = []
    if headroom.running and headroom.more_failures == 0 and headroom.redundant_by_design:
        weak = [c.array for c in _walk(headroom) if c.running and c.more_failures == 0]
        redundant = _redundant(headroom)
        below = [n for n in weak if n != headroom.array and n in redundant]
        where = f" (no headroom left in {', '.join(below)})" if below else ""
        found.append((Status.CRITICAL, f"can lose nothing more{where}"))
    elif headroom.running:
        hurt = [
            child.array
            for child in _walk(headroom)[1:]
            if not child.running or topology.nodes[child.array].dead_slots
        ]
        if hurt:
            found.append((Status.WARNING, f"member array {', '.join(hurt)} lost redundancy"))
    return found


def _sync_findings(
    array: Array, detail: Detail | None, figures: dict[str, Any], evidence: Evidence
) -> list[tuple[Status, str]]:
    sync = array.sync
    if sync is None:
        return _detail_progress(detail, figures, evidence)
    figures["sync_action"] = sync.action
    if sync.state != "running":
        figures["stalled"] = False
        if sync.action not in _REBUILDS:
            return []
        why = _WAITING.get(sync.state, "waiting")
        return [(Status.WARNING, f"{sync.action} {sync.state.lower()} ({why})")]
    stalled = sync.speed_kib_per_sec == 0 or (sync.finish_minutes or 0) > ABSURD_ETA_MINUTES
    figures.update(
        sync_percent=sync.percent,
        speed_kib_per_sec=sync.speed_kib_per_sec,
        eta_minutes=sync.finish_minutes,
        stalled=stalled,
    )
    progress = f"{sync.action} {sync.percent:.1f}% done"
    if stalled:
        speed = sync.speed_kib_per_sec
        return [(Status.WARNING, f"{progress} but stalled (speed {speed} KiB/s)")]
    eta = "" if sync.finish_minutes is None else f", ETA {duration(sync.finish_minutes)}"
    speed = "" if sync.speed_kib_per_sec is None else f" at {kib_per_s(sync.speed_kib_per_sec)}"
    status = Status.WARNING if sync.action in _REBUILDS else Status.OK
    return [(status, f"{progress}{eta}{speed}")] if status is Status.WARNING else []


def _detail_progress(
    detail: Detail | None, figures: dict[str, Any], evidence: Evidence
) -> list[tuple[Status, str]]:
    """``mdadm --detail`` percentages, for when /proc/mdstat was not collected with it."""
    if detail is None:
        return []
    # mdadm prints "Rebuild Status" for a resync too; the State line tells which it is.
    rebuild = "resync" if "resyncing" in detail.state_flags else "recovery"
    for action, percent in (
        (rebuild, detail.rebuild_status_percent),
        ("reshape", detail.reshape_status_percent),
        ("resync", detail.resync_status_percent),
    ):
        if percent is not None:
            if action == "resync" and evidence.sysfs.sync_action == "repair":
                action = "repair"  # mdadm reads /proc/mdstat, which prints a repair as resync
            figures.update(sync_action=action, sync_percent=float(percent), stalled=False)
            if action not in _REBUILDS:
                return []
            return [(Status.WARNING, f"{action} {float(percent):.1f}% done")]
    return []


def _healthy_reason(array: Array, headroom: ArrayHeadroom, evidence: Evidence) -> str:
    scrub = ""
    if array.sync is not None and array.sync.state == "running" and array.sync.percent is not None:
        scrub = f", {array.sync.action} {array.sync.percent:.1f}% done"
        if evidence.printed_action:
            scrub += f" (sync_action says {array.sync.action}; /proc/mdstat prints it as "
            scrub += f"{evidence.printed_action})"
    if not headroom.redundant_by_design:
        level = array.level or "array"
        return f"{array.name}: active {level}, no redundancy by design{scrub}"
    return f"{describe_headroom(headroom)}{scrub}"


def _walk(headroom: ArrayHeadroom) -> list[ArrayHeadroom]:
    """``headroom`` and everything below it, depth first, without recursion."""
    found: list[ArrayHeadroom] = []
    stack = [headroom]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(reversed(node.children))
    return found


def _redundant(headroom: ArrayHeadroom) -> set[str]:
    return {h.array for h in _walk(headroom) if h.designed_tolerance > 0}

"""Scrubs (checks and repairs) of one array over time: when the last ended, what it found.

Pure module: no Django, no I/O. The kernel keeps no time of a check (``kernel.FACTS
["mismatch-cnt"]``), so Vigil follows the array from report to report: ``follow(memory,
sysfs, now, thresholds)`` takes what it remembered (``ScrubMemory``, kept on the array's row)
and this reading's sysfs words, and returns the new memory with the judgement (its rules:
``follow``; what users see: docs/raid.md, "Disks, scrubs and replacement advice").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from apps.lib.formats import rough_duration
from apps.lib.status import Status
from apps.lib.thresholds import Notes
from apps.raid.kernel import SCRUBS
from apps.raid.parse_sysfs import SysfsState

__all__ = ["Scrub", "ScrubMemory", "ScrubThresholds", "follow"]


@dataclass(frozen=True)
class ScrubThresholds:
    max_days: int = 40  # monthly checks (Debian, Ubuntu) with a week's slack; 0: off
    mismatch_sectors: int = 1  # 0: off
    #: Which thresholds a region or an array set (``apps.lib.thresholds.resolve``).
    notes: Notes = Notes()


@dataclass(frozen=True)
class ScrubMemory:
    """What Vigil remembers of an array's scrubs between reports (its row's columns)."""

    sync_action: str = ""  # at the last reading
    last_sync_action: str = ""  # at the last reading
    check_ended: datetime | None = None  # when Vigil saw the last check or repair end
    check_action: str = ""  # "check" or "repair": which one ended then
    watched_since: datetime | None = None  # the first reading with a sync_action


@dataclass(frozen=True)
class Scrub:
    memory: ScrubMemory
    judged: bool  # False: no sync_action (a RAID-0, or not sent)
    mismatch_cnt: int | None
    status: Status  # ok or warning
    text: str  # for the page: "last check ended 2026-11-20 (6 days ago), 0 mismatches"
    findings: tuple[str, ...] = ()  # the warnings, for the array's reason


def follow(
    memory: ScrubMemory, sysfs: SysfsState, now: datetime, thresholds: ScrubThresholds
) -> Scrub:
    """The array's scrubs at ``now``, from what was remembered and this reading's sysfs.

    - A check or repair that was running and is no longer ended at this reading's time (the
      agent's reading time, or the pull's); one whose whole run fell between two readings is
      seen when ``last_sync_action`` turns to ``check``/``repair``. A check shorter than the
      collection interval that follows another check is not seen.
    - After a **check**, a ``mismatch_cnt`` at or above ``mismatch_sectors`` is a **warning**
      (on RAID-1/10 possibly harmless, the reason says so); after a repair the count is what
      was rewritten.
    - **No check for N days**: a **warning** once the last check ended more than ``max_days``
      ago, or, with none seen, once Vigil has read the array's ``sync_action`` for that long
      (the last check is at least that old). ``max_days`` 0 turns it off.
    - An array without ``sync_action`` (a RAID-0, or a host that does not send it) is not
      judged.
    """
    action = sysfs.sync_action
    if action is None:
        return Scrub(memory, False, sysfs.mismatch_cnt, Status.OK, "")
    last = sysfs.last_sync_action or ""
    ended, what = memory.check_ended, memory.check_action
    if memory.sync_action in SCRUBS and action != memory.sync_action:
        ended, what = now, memory.sync_action
    elif (
        memory.watched_since is not None
        and action not in SCRUBS
        and last in SCRUBS
        and memory.last_sync_action not in SCRUBS
    ):
        ended, what = now, last  # it ran between two readings
    memory = replace(
        memory,
        sync_action=action,
        last_sync_action=last,
        check_ended=ended,
        check_action=what,
        watched_since=memory.watched_since or now,
    )
    findings = []
    mismatches = sysfs.mismatch_cnt
    after_check = action not in SCRUBS and last == "check" and mismatches is not None
    if after_check and thresholds.mismatch_sectors and mismatches >= thresholds.mismatch_sectors:
        findings.append(
            f"the last check found {mismatches} sectors out of step (mismatch_cnt; a repair "
            "rewrites them; on RAID-1/10 swap can cause it)"
            + _over(thresholds, "mismatch_sectors", f"at least {thresholds.mismatch_sectors}")
        )
    findings += _age(memory, now, thresholds)
    return Scrub(
        memory=memory,
        judged=True,
        mismatch_cnt=mismatches,
        status=Status.WARNING if findings else Status.OK,
        text=_text(memory, action, last, mismatches, now),
        findings=tuple(findings),
    )


def _age(memory: ScrubMemory, now: datetime, thresholds: ScrubThresholds) -> list[str]:
    if not thresholds.max_days or memory.sync_action in SCRUBS:
        return []
    limit = timedelta(days=thresholds.max_days)
    if memory.check_ended is not None:
        age = now - memory.check_ended
        if age > limit:
            return [
                f"no check for {age.days} days (the last ended {_day(memory.check_ended)})"
                + _over(thresholds, "check_max_days", f"over {thresholds.max_days} days")
            ]
        return []
    since = memory.watched_since or now
    if now - since > limit:
        return [
            f"no check seen for {(now - since).days} days (Vigil has read its sync_action since "
            f"{_day(since)})"
            + _over(thresholds, "check_max_days", f"over {thresholds.max_days} days")
        ]
    return []


def _over(thresholds: ScrubThresholds, name: str, shown: str) -> str:
    note = thresholds.notes(name)
    return f" ({shown}: {note})" if note else ""


def _day(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d")


def _text(
    memory: ScrubMemory, action: str, last: str, mismatches: int | None, now: datetime
) -> str:
    if action in SCRUBS:
        return f"{action} running"
    counted = "" if mismatches is None else f", mismatch_cnt {mismatches}"
    if memory.check_ended is not None:
        ago = rough_duration((now - memory.check_ended).total_seconds())
        what = memory.check_action or "check"
        return f"last {what} ended {_day(memory.check_ended)} ({ago} ago){counted}"
    if last in SCRUBS:
        return f"last {last} ended before {_day(memory.watched_since or now)}{counted}"
    return f"no check seen since {_day(memory.watched_since or now)}"

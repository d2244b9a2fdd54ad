"""What sysfs and ``mdadm --detail`` add to /proc/mdstat, folded into the parsed arrays.

Pure module: no Django, no I/O. ``reconcile`` returns /proc/mdstat as the kernel means it
(``apps/raid/kernel.py`` has the facts): an array that /proc/mdstat, its ``array_state`` or
``mdadm --detail`` calls ``broken`` is broken, even where an older kernel still prints
``active``; a ``resync`` that ``sync_action`` calls ``repair`` is a repair, a scrub the user
started rather than a rebuild. ``Evidence`` keeps who said so, for the reason a person reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from apps.raid.parse_mdadm import Detail
from apps.raid.parse_mdstat import Array, Mdstat
from apps.raid.parse_sysfs import SysfsState

__all__ = ["Evidence", "reconcile"]


@dataclass(frozen=True)
class Evidence:
    """What was said of one array beyond its /proc/mdstat lines."""

    broken_by: tuple[str, ...] = ()  # "/proc/mdstat", "array_state", "mdadm --detail"
    printed_action: str | None = None  # what /proc/mdstat printed, when sync_action renamed it
    sysfs: SysfsState = SysfsState()


def reconcile(
    mdstat: Mdstat,
    details: Mapping[str, Detail] | None = None,
    sysfs: Mapping[str, SysfsState] | None = None,
) -> tuple[Mdstat, dict[str, Evidence]]:
    """``mdstat`` with every array's state and sync action as the kernel means them."""
    details = details or {}
    sysfs = sysfs or {}
    arrays = []
    evidence: dict[str, Evidence] = {}
    for array in mdstat.arrays:
        folded, found = _fold(array, details.get(array.name), sysfs.get(array.name))
        arrays.append(folded)
        evidence[array.name] = found
    return replace(mdstat, arrays=tuple(arrays)), evidence


def _fold(array: Array, detail: Detail | None, state: SysfsState | None) -> tuple[Array, Evidence]:
    state = state or SysfsState()
    if array.unreadable is not None:
        return array, Evidence(sysfs=state)
    broken_by = []
    if array.state == "broken":
        broken_by.append("/proc/mdstat")
    if state.array_state == "broken":
        broken_by.append("array_state")
    if detail is not None and "broken" in {flag.lower() for flag in detail.state_flags}:
        broken_by.append("mdadm --detail")
    if broken_by and array.state == "active":
        array = replace(array, state="broken")
    printed = None
    sync = array.sync
    if sync is not None and sync.action == "resync" and state.sync_action == "repair":
        printed = sync.action
        array = replace(array, sync=replace(sync, action="repair"))
    return array, Evidence(broken_by=tuple(broken_by), printed_action=printed, sysfs=state)

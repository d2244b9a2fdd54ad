"""What the Linux md driver and mdadm print: the one table of kernel facts of md-RAID.

Pure module: no Django, no I/O, no imports of Vigil's. Every fact Vigil's md-RAID parsers and
verdict rely on is a row of ``FACTS`` with its source and the date it was read (2026-11-26,
through the ``search`` tool); docs/raid.md names the same sources. The word
sets below are the kernel's words as those sources list them.

Where today's kernel disagrees with the 2018 articles Vigil began from (which knew
``active``/``inactive`` and called a RAID-0 with all members listed healthy), the kernel is
followed: it is what the host runs. Older kernels print the older words, which still read the
same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "ARRAY_STATES",
    "FACTS",
    "MDSTAT_STATES",
    "PROGRESS_ACTIONS",
    "SCRUBS",
    "SYNC_ACTIONS",
    "SYSFS_FILES",
    "WORD",
]


@dataclass(frozen=True)
class Fact:
    what: str
    source: str
    read: str = "2026-11-26"


_MD_C = "https://github.com/torvalds/linux/blob/master/drivers/md/md.c"
_MD_RST = (
    "https://www.kernel.org/doc/html/latest/admin-guide/md.html "
    "(torvalds/linux Documentation/admin-guide/md.rst)"
)
_MDADM = "https://github.com/md-raid-utilities/mdadm/blob/d1447022"  # 2026-07-22

#: The kernel's and mdadm's behaviour that the parsers and the verdict depend on.
FACTS: dict[str, Fact] = {
    "mdstat-state": Fact(
        "md_seq_show prints each array as '<name> : <state> ...': 'active' with a personality, "
        "'inactive' without; since the patch 'md: report failed arrays as broken in mdstat' "
        "(Mateusz Kusiak, 2024-09-03) 'broken' when MD_BROKEN is set. The 6.12 stable series "
        "already carries the new code (its 2025-02-05 review patches quote it). Older kernels "
        "print 'active' for the same failed array.",
        "https://lore.kernel.org/linux-raid/20240903142949.53628-1-mateusz.kusiak@intel.com/ ; "
        f"{_MD_C} md_seq_show",
    ),
    "md-broken": Fact(
        "Since kernel 5.4 a RAID-0 or linear array whose member is gone is marked MD_BROKEN and "
        "its array_state reads 'broken' (commit 62f7b1989c02, 'md raid0/linear: Mark array as "
        "broken and fail BIOs if a member is gone', 2019); writes to it fail. Commits 9631abdbf406 "
        "('md: Set MD_BROKEN for RAID1 and RAID10', posted by Mariusz Tkaczyk 2021-12-16, in "
        "the 5.15 stable series since 2023-09) and 'raid5: introduce MD_BROKEN' set it on "
        "redundant arrays that failed as well.",
        f"{_MD_C} (array_states[], md_submit_bio, md_error); "
        "https://github.com/torvalds/linux/commit/62f7b1989c02 ; https://lore.kernel.org/linux-raid/"
        "20211216145222.15370-3-mariusz.tkaczyk@linux.intel.com/",
    ),
    "mdadm-broken": Fact(
        "mdadm 4.2 and later print 'State : broken' for a RAID-0 or linear array whose sysfs "
        "array_state is 'broken' (Detail.c reads it for those levels only; commit 43ebc910, "
        "2019-09-03, first in mdadm-4.2).",
        f"{_MDADM}/Detail.c, {_MDADM}/maps.c (sysfs_array_states); "
        "https://github.com/md-raid-utilities/mdadm/commit/43ebc910",
    ),
    "mdadm-missing": Fact(
        "mdadm --detail prints 'missing' in place of the device path of a member whose device "
        "node is gone.",
        f"{_MDADM}/Detail.c",
    ),
    "array-state": Fact(
        "/sys/block/mdX/md/array_state holds one word: clear, inactive, suspended, readonly, "
        "read-auto, clean, active, write-pending, active-idle or broken (md.rst lists all but "
        "broken; md.c's array_states[] has it). World-readable.",
        f"{_MD_RST}; {_MD_C} array_states[]",
    ),
    "sync-action": Fact(
        "/sys/block/mdX/md/sync_action holds one word: resync, recover, check, repair, reshape, "
        "frozen or idle (md.c's action_name[]); only arrays with redundancy have the file. "
        "'repair' is 'like resync, but requested by the user'. World-readable.",
        f"{_MD_RST}; {_MD_C} action_name[]",
    ),
    "repair-prints-resync": Fact(
        "/proc/mdstat names a running action from the recovery flags: reshape, check (only "
        "MD_RECOVERY_CHECK), resync (MD_RECOVERY_SYNC) or recovery. A user's 'repair' sets "
        "SYNC without CHECK, so the progress line says 'resync'; only sync_action tells them "
        "apart.",
        f"{_MD_C} status_resync",
    ),
    "mismatch-cnt": Fact(
        "/sys/block/mdX/md/mismatch_cnt counts the sectors a check found out of step (a "
        "repair: rewrote) in the last such pass, in units of pages rather than sectors on most "
        "levels, so it may exceed the real count; on RAID-1 and RAID-10 a non-zero count can "
        "be harmless (swap, or a write still in flight while the check read). Since kernel "
        "3.11, last_sync_action says which action the count is of: check, repair, resync, "
        "recover, reshape (or none/idle before any). The kernel keeps no time of it.",
        f"{_MD_RST} (mismatch_cnt); 'MD: Remember the last sync operation that was performed' "
        "(Jonathan Brassow, 2013-06-25), https://github.com/torvalds/linux/commit/"
        "c4a39551451666229b4ea5e8aae8ca0131d00665",
    ),
    "monitor-severity": Fact(
        "mdadm --monitor logs DeviceDisappeared, Fail, FailSpare and DegradedArray at LOG_CRIT "
        "and RebuildStarted, Rebuild and RebuildFinished at LOG_WARNING: a degraded array is "
        "critical however much redundancy it has left.",
        f"{_MDADM}/mdmonitor.c (enum event, get_syslog_event_priority)",
    ),
}

#: The state words of /proc/mdstat's header line (FACTS["mdstat-state"]).
MDSTAT_STATES = frozenset({"active", "inactive", "broken"})
#: array_state words (FACTS["array-state"]).
ARRAY_STATES = frozenset(
    {
        "clear",
        "inactive",
        "suspended",
        "readonly",
        "read-auto",
        "clean",
        "active",
        "write-pending",
        "active-idle",
        "broken",
    }
)
#: The actions of a /proc/mdstat progress line: the four status_resync prints
#: (FACTS["repair-prints-resync"]) and ``repair``, which Vigil writes for a ``resync`` that
#: sync_action calls a repair.
PROGRESS_ACTIONS = frozenset({"recovery", "resync", "check", "repair", "reshape"})
#: sync_action words (FACTS["sync-action"]).
SYNC_ACTIONS = frozenset({"resync", "recover", "check", "repair", "reshape", "frozen", "idle"})
#: The scrubs a user (or the distribution's monthly timer) starts: a check, or a repair.
SCRUBS = frozenset({"check", "repair"})
#: The files of /sys/block/mdX/md/ the agent and the SSH pull read (FACTS["array-state"],
#: ["sync-action"], ["mismatch-cnt"]); all world-readable.
SYSFS_FILES = ("array_state", "sync_action", "last_sync_action", "mismatch_cnt")
#: What a sysfs word may look like before Vigil keeps it (the columns hold 20 characters).
WORD = re.compile(r"[a-z][a-z_-]{0,19}", re.ASCII)

"""Read each array's sysfs files from the lines a host sends.

Pure module: no Django, no I/O. The push agent and the SSH pull send what
``grep -s . /sys/block/mdX/md/array_state /sys/block/mdX/md/sync_action ...`` prints:
one ``/sys/block/md0/md/sync_action:repair`` line per file (grep names the file when it reads
several), for ``array_state``, ``sync_action``, ``last_sync_action`` and ``mismatch_cnt``
(``kernel.SYSFS_FILES``). These are extra evidence beside /proc/mdstat, never needed: a line
that is not of this shape, a file of another array, or a value that is not one short lowercase
word (``kernel.WORD``; for ``mismatch_cnt`` a number of at most 19 digits) is left out, and
the array is judged on /proc/mdstat alone. Nothing here raises, and the work is one pass over
at most ``MAX_LINES`` lines.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, replace

from apps.raid import bounds
from apps.raid.kernel import SYSFS_FILES, WORD

__all__ = ["MAX_LINES", "SysfsState", "parse"]

MAX_LINES = 2 * len(SYSFS_FILES) * bounds.MAX_ARRAYS  # room for blank or odd lines
_LINE = re.compile(
    rf"/sys/block/([A-Za-z0-9_]{{1,{bounds.MAX_NAME}}})/md/({'|'.join(SYSFS_FILES)}):(.*)",
    re.ASCII,
)
_COUNT = re.compile(r"[0-9]{1,19}", re.ASCII)


@dataclass(frozen=True)
class SysfsState:
    """One array's words from /sys/block/mdX/md/ (None: not sent, or not a word)."""

    array_state: str | None = None
    sync_action: str | None = None
    last_sync_action: str | None = None  # the last sync action that ran (kernel 3.11+)
    mismatch_cnt: int | None = None  # sectors a check found (a repair rewrote) out of step


def parse(text: str | None, known: Collection[str] | None = None) -> dict[str, SysfsState]:
    """``{"md0": SysfsState(...)}`` for the arrays in ``known`` (all when None); the first
    readable line of each file counts."""
    found: dict[str, SysfsState] = {}
    for line in (text or "").split("\n", MAX_LINES)[:MAX_LINES]:
        match = _LINE.fullmatch(line.strip("\r"))
        if match is None:
            continue
        name, attribute, value = match.groups()
        if known is not None and name not in known:
            continue
        word = value.strip(" ")
        read: str | int | None = None
        if attribute == "mismatch_cnt":
            if _COUNT.fullmatch(word) and int(word) <= bounds.MAX_BIGINT:
                read = int(word)
        elif WORD.fullmatch(word):
            read = word
        if read is None:
            continue
        state = found.get(name, SysfsState())
        if getattr(state, attribute) is None:
            found[name] = replace(state, **{attribute: read})
    return found

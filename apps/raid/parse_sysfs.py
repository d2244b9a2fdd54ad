"""Read each array's ``array_state`` and ``sync_action`` from the lines a host sends.

Pure module: no Django, no I/O. The push agent and the SSH pull send what
``grep -s . /sys/block/mdX/md/array_state /sys/block/mdX/md/sync_action ...`` prints:
one ``/sys/block/md0/md/sync_action:repair`` line per file (grep names the file when it reads
several). These words are extra evidence beside /proc/mdstat, never needed: a line that is
not of this shape, a file of another array, or a value that is not one short lowercase word
(``kernel.WORD``) is left out, and the array is judged on /proc/mdstat alone. Nothing here
raises, and the work is one pass over at most ``MAX_LINES`` lines.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, replace

from apps.raid import bounds
from apps.raid.kernel import WORD

__all__ = ["MAX_LINES", "SysfsState", "parse"]

MAX_LINES = 4 * bounds.MAX_ARRAYS  # two files an array, and room for blank or odd lines
_LINE = re.compile(
    rf"/sys/block/([A-Za-z0-9_]{{1,{bounds.MAX_NAME}}})/md/(array_state|sync_action):(.*)",
    re.ASCII,
)


@dataclass(frozen=True)
class SysfsState:
    """One array's words from /sys/block/mdX/md/ (None: not sent, or not a word)."""

    array_state: str | None = None
    sync_action: str | None = None


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
        if not WORD.fullmatch(word):
            continue
        state = found.get(name, SysfsState())
        if getattr(state, attribute) is None:
            found[name] = replace(state, **{attribute: word})
    return found

"""How large a host's report may be, and how much work judging it may take.

Pure module: no Django, no I/O. The parsers (``parse_mdstat``, ``parse_mdadm``) refuse what is
larger than these bounds, or what the database could not store, with a ``ParseError`` naming
the line; ``Topology`` spends a ``Budget`` while it searches, and a report whose search would
cost more is answered "too large to judge" rather than taking minutes of a web worker.

The bounds are far above real hosts: md arrays with 0.90 metadata hold at most 27 devices and
large 1.x arrays a few dozen (the format allows a few hundred), nested arrays are one or two
levels deep in practice (RAID-10 over RAID-1, RAID-0 over RAID-6), and a raid10 keeps 2 or 3
copies.
"""

from __future__ import annotations

__all__ = [
    "JUDGEMENT_BUDGET",
    "MAX_ARRAYS",
    "MAX_DEVICE",
    "MAX_DEVICES",
    "MAX_INT",
    "MAX_BIGINT",
    "MAX_MEMBERS",
    "MAX_NAME",
    "MAX_NESTING",
    "MAX_STATE",
    "Budget",
    "TooLarge",
    "unstorable",
]

MAX_ARRAYS = 256  # arrays in one report
MAX_MEMBERS = 256  # members listed for one array, and n in "[n/m]" (the [UU_] column holds 300)
MAX_DEVICES = 4096  # member devices of all arrays of one report together
MAX_NESTING = 8  # levels of arrays over arrays
MAX_NAME = 64  # characters of an array name (the column's length)
MAX_DEVICE = 100  # characters of a member device name (the column's length)
MAX_STATE = 100  # characters of a member's state in mdadm --detail (the column's length)
MAX_INT = 2**31 - 1  # PositiveIntegerField: roles and slots
MAX_BIGINT = 2**63 - 1  # PositiveBigIntegerField: sizes and speeds
# Steps of the headroom and failure-domain searches for one report (a step is 0.1 to 0.3 µs:
# a member looked at, a slot of a raid10 copy group, a device tried against a rule), so at
# most about 0.3 s of one core (bench/hostile.py measures it); a report that needs more is
# "too large to judge".
JUDGEMENT_BUDGET = 1_000_000


class TooLarge(Exception):
    """The judgement of a report would take more than its budget."""


class Budget:
    """Steps a judgement may still take; ``spend`` raises ``TooLarge`` past the end."""

    def __init__(self, steps: int = JUDGEMENT_BUDGET) -> None:
        self.steps = steps
        self.left = steps

    def spend(self, steps: int = 1) -> None:
        self.left -= steps
        if self.left < 0:
            raise TooLarge(f"more than {self.steps:,} steps")

    @property
    def spent(self) -> int:
        return self.steps - max(self.left, 0)

    @property
    def exhausted(self) -> bool:
        return self.left < 0


def unstorable(line: str) -> str | None:
    """Why a line of text cannot be stored (PostgreSQL refuses NUL; nothing stores lone
    surrogates, which is how undecodable bytes arrive), or None."""
    if "\x00" in line:
        return "a NUL character, which cannot be stored"
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return "bytes that are not UTF-8 text"
    return None

"""State transfers seen in the poll history: which node joined from which donor, since when,
and how long the finished ones took.

A node is joining from the first poll that finds its ``wsrep_local_state_comment`` starting
with "Join" (Joining, Joining: receiving State Transfer, Joined: applying what came after) or
"Waiting" (on SST), until the first that finds it Synced; its donor is the node found
Donor/Desynced meanwhile (a node desynced for a backup looks the same: the first one seen is
named). Polls are minutes apart: a transfer shorter than one interval may not be seen, and a
duration is known to the interval (``resolution_s``).

Pure module: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

DONOR = ("donor/desynced", "donor")


@dataclass(frozen=True)
class Transfer:
    joiner: str
    donor: str | None
    started: datetime  # the first poll that found it joining
    ended: datetime | None  # the first poll that found it Synced; None: still joining
    resolution_s: float | None  # seconds between the polls around its start

    @property
    def seconds(self) -> float | None:
        return None if self.ended is None else (self.ended - self.started).total_seconds()


JOINING = ("join", "waiting")  # a state comment's start, lower case


def joining(comment: str | None) -> bool:
    return (comment or "").strip().lower().startswith(JOINING)


def transfers(history: Iterable[tuple[datetime, Mapping[str, str | None]]]) -> list[Transfer]:
    """The transfers in ``history`` (each poll's time and every node's state comment, oldest
    first), the most recent first."""
    found: list[Transfer] = []
    open_: dict[str, dict] = {}
    previous: datetime | None = None
    for at, comments in history:
        states = {node: (comment or "").strip().lower() for node, comment in comments.items()}
        if not open_ and not any(s.startswith(JOINING) for s in states.values()):
            previous = at  # all synced or donors, nothing joining: most polls
            continue
        donors = [n for n, s in sorted(states.items()) if s in DONOR]
        for node, state in sorted(states.items()):
            if state.startswith(JOINING) and node not in open_:
                gap = (at - previous).total_seconds() if previous else None
                open_[node] = {"started": at, "donor": None, "gap": gap}
            if node in open_:
                others = [d for d in donors if d != node]
                if open_[node]["donor"] is None and others:
                    open_[node]["donor"] = others[0]
                if state == "synced":
                    seen = open_.pop(node)
                    found.append(Transfer(node, seen["donor"], seen["started"], at, seen["gap"]))
        previous = at
    for node, seen in open_.items():
        found.append(Transfer(node, seen["donor"], seen["started"], None, seen["gap"]))
    return sorted(found, key=lambda t: t.started, reverse=True)

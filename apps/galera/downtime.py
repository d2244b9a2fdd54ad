"""How long a node may be down before it needs a full state transfer: the figure PMM calls
"available downtime before SST" and Severalnines the replication window.

A node that left at seqno N rejoins by IST while a donor's gcache still holds N+1 on; the
gcache holds ``wsrep_local_cached_downto`` .. ``wsrep_last_committed`` (Codership's status
variables; ``documented.SEVERALNINES_WINDOW``, read 2026-11-26) and, once full, drops the oldest
write-sets as new ones come. At the commit rate of the last interval, what a donor holds lasts
``(last_committed - cached_downto) / rate`` seconds; the node may be down that long, from the
best donor among the others. A gcache not yet full holds more than it has seen: the figure is
then low, never high.

Pure module: no Django, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Downtime:
    node: str
    seconds: float  # math.inf: no writes in the last interval
    donor: str
    held: int  # write-sets in the donor's gcache
    commits_per_s: float

    @property
    def words(self) -> str:
        return describe(self)


def window_s(
    cached_downto: int | None, last_committed: int | None, rate: float | None
) -> float | None:
    """Seconds until a gcache holding ``cached_downto``..``last_committed`` drops what is
    committed now, at ``rate`` commits a second; None when it cannot be told."""
    if cached_downto is None or last_committed is None or rate is None or rate < 0:
        return None
    if cached_downto <= 0 or cached_downto > last_committed + 1:
        return None
    held = last_committed - cached_downto
    return math.inf if rate == 0 else held / rate


def downtime_before_sst(
    node: str, donors: Mapping[str, tuple[int | None, int | None]], rate: float | None
) -> Downtime | None:
    """``node``'s downtime before SST from the other ``donors`` (name: (cached_downto,
    last_committed)), at ``rate`` commits a second; None when no donor tells."""
    best: Downtime | None = None
    for donor, (cached_downto, last_committed) in sorted(donors.items()):
        if donor == node:
            continue
        seconds = window_s(cached_downto, last_committed, rate)
        if seconds is None or (best is not None and seconds <= best.seconds):
            continue
        held = (last_committed or 0) - (cached_downto or 0)
        best = Downtime(node, seconds, donor, held, rate or 0.0)
    return best


def duration(seconds: float) -> str:
    """~45 s, ~12 min, ~3 h, ~4 days."""
    if seconds < 120:
        return f"~{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"~{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"~{seconds / 3600:.0f} h"
    return f"~{seconds / 86400:.0f} days"


def describe(downtime: Downtime) -> str:
    """E.g. "node2 may be down ~3 h before it needs a full state transfer (node1's gcache
    holds 12,000 write-sets, at 1.1 commits/s)"."""
    source = f"{downtime.donor}'s gcache holds {downtime.held:,} write-sets"
    if math.isinf(downtime.seconds):
        return (
            f"{downtime.node} may be down as long as no writes come (none in the last "
            f"interval; {source})"
        )
    return (
        f"{downtime.node} may be down {duration(downtime.seconds)} before it needs a full "
        f"state transfer ({source}, at {downtime.commits_per_s:.3g} commits/s)"
    )

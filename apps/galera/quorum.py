"""Quorum arithmetic for a Galera cluster: how many more members may fail.

Galera keeps a component Primary when its members hold MORE than half of the weight of the
last Primary component (pc.weight, 1 by default). Members that fail one at a time re-vote in
between, so each step only needs a majority of the previous, already smaller, component;
members that fail together are measured against the whole current component. A cluster
whose only survivor is an arbitrator (garbd) holds no data, so it counts as stopped.

Pure module: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Member:
    """One voting member of the current Primary component."""

    name: str
    weight: int = 1
    arbitrator: bool = False


@dataclass(frozen=True)
class FaultTolerance:
    """How many of the current members may still fail before the cluster stops."""

    one_by_one: int
    simultaneous: int

    @property
    def words(self) -> str:
        return describe(self)


def member_names(data_nodes: int, arbitrators: int = 0) -> list[str]:
    """The default member names ``fault_tolerance`` uses: node1.., then garbd1.."""
    return [f"node{i}" for i in range(1, data_nodes + 1)] + [
        f"garbd{i}" for i in range(1, arbitrators + 1)
    ]


def fault_tolerance(
    data_nodes: int, arbitrators: int = 0, weights: Mapping[str, int] | None = None
) -> FaultTolerance:
    """Headroom of a Primary component of ``data_nodes`` nodes plus ``arbitrators`` garbd.

    ``weights`` gives pc.weight per member name; members are named as ``member_names``
    returns (``node1``.. then ``garbd1``..) and unnamed members weigh 1. Use
    ``fault_tolerance_of`` to pass members with their real names.
    """
    if data_nodes < 0 or arbitrators < 0:
        raise ValueError("member counts cannot be negative")
    weights = dict(weights or {})
    names = member_names(data_nodes, arbitrators)
    unknown = sorted(set(weights) - set(names))
    if unknown:
        raise ValueError(f"weights name unknown members: {', '.join(unknown)}")
    members = [
        Member(name, weights.get(name, 1), arbitrator=name.startswith("garbd")) for name in names
    ]
    return fault_tolerance_of(members)


def fault_tolerance_of(members: Iterable[Member]) -> FaultTolerance:
    """Headroom of a Primary component made of ``members`` (worst case over who fails)."""
    members = list(members)
    for member in members:
        if member.weight < 0:
            raise ValueError(f"pc.weight of {member.name} cannot be negative")
    # Members with the same weight and role are interchangeable: count them per kind.
    kinds: dict[tuple[int, bool], int] = {}
    for member in members:
        key = (member.weight, member.arbitrator)
        kinds[key] = kinds.get(key, 0) + 1
    state = tuple(sorted(kinds.items()))
    return FaultTolerance(one_by_one=_one_by_one(state), simultaneous=_simultaneous(members))


_State = tuple[tuple[tuple[int, bool], int], ...]


def _weight(state: _State) -> int:
    return sum(weight * count for (weight, _), count in state)


def _has_data_node(state: _State) -> bool:
    return any(count for (_, arbitrator), count in state if not arbitrator)


def _without_one(state: _State, index: int) -> _State:
    kind, count = state[index]
    rest = list(state)
    if count == 1:
        del rest[index]
    else:
        rest[index] = (kind, count - 1)
    return tuple(rest)


@cache
def _one_by_one(state: _State) -> int:
    """Failures survived one at a time when the worst member fails at each step."""
    if not _has_data_node(state):
        return 0
    total = _weight(state)
    worst = None
    for index in range(len(state)):
        survivors = _without_one(state, index)
        if 2 * _weight(survivors) > total and _has_data_node(survivors):
            outcome = 1 + _one_by_one(survivors)
        else:
            outcome = 0
        worst = outcome if worst is None else min(worst, outcome)
    return worst or 0


def _simultaneous(members: list[Member]) -> int:
    """Failures survived at once: one less than the smallest fatal set of members.

    A set is fatal when it takes all data nodes, or at least half of the weight (the
    heaviest members first make the smallest such set).
    """
    data = sum(1 for member in members if not member.arbitrator)
    if data == 0:
        return 0
    total = sum(member.weight for member in members)
    heaviest_first = sorted((member.weight for member in members), reverse=True)
    fatal_by_weight, lost = 0, 0
    while 2 * lost < total:
        lost += heaviest_first[fatal_by_weight]
        fatal_by_weight += 1
    return max(0, min(data, fatal_by_weight) - 1)


def _nodes(count: int) -> str:
    return f"{count} more node" + ("" if count == 1 else "s")


def describe(tolerance: FaultTolerance) -> str:
    """Headroom in words, e.g. "can lose 2 more nodes one at a time, 1 at once"."""
    if tolerance.one_by_one == 0:
        return "cannot lose any more nodes: one more failure stops the cluster"
    return (
        f"can lose {_nodes(tolerance.one_by_one)} one at a time, {tolerance.simultaneous} at once"
    )

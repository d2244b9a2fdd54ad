"""Quorum arithmetic for a Galera cluster: how many more members may fail.

Galera keeps a component Primary when its members hold MORE than half of the weight of the
last Primary component (pc.weight, 1 by default; ``documented.py``). Members that fail one at a time re-vote in
between, so each step only needs a majority of the previous, already smaller, component;
members that fail together are measured against the whole current component. A cluster
whose only survivor is an arbitrator (garbd) holds no data, so it counts as stopped.

Pure module: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from apps.galera.documented import PC_WEIGHT_DEFAULT


@dataclass(frozen=True)
class Member:
    """One voting member of the current Primary component."""

    name: str
    weight: int = PC_WEIGHT_DEFAULT
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
    return FaultTolerance(one_by_one=_one_by_one(members), simultaneous=_simultaneous(members))


def fault_tolerance_after(members: Iterable[Member], lost: Iterable[str]) -> FaultTolerance:
    """Headroom of a component some of whose members are already lost, though still counted
    (a node cut from the group, wsrep_connected=OFF, before the others evicted it).

    The lost members fail first, together: when that alone is fatal (at least half of the
    weight, or every data node), nothing is left; otherwise the headroom is that of the
    members left, the component that forms once they are evicted.
    """
    members = list(members)
    lost = set(lost)
    gone = [member for member in members if member.name in lost]
    if not gone:
        return fault_tolerance_of(members)
    left = [member for member in members if member.name not in lost]
    total = sum(member.weight for member in members)
    gone_weight = sum(member.weight for member in gone)
    if 2 * gone_weight >= total or not any(not member.arbitrator for member in left):
        return FaultTolerance(0, 0)
    return fault_tolerance_of(left)


@dataclass(frozen=True)
class Weighted:
    """The members with the weights the quorum arithmetic uses (``with_total_weight``)."""

    members: tuple[Member, ...]
    unknown_weight: int | None = None  # what the members of unknown weight hold together
    worst_case: bool = False  # that weight is not 1 each: all of it given to one of them
    inconsistent: bool = False  # the total is less than the weights known: not used


def with_total_weight(
    members: Sequence[Member], unknown: Iterable[str], total: int | None
) -> Weighted:
    """Make the weights add up to ``total`` (``wsrep_cluster_weight``, the sum of pc.weight in
    the Primary component) where some are ``unknown`` (garbd, nodes Vigil does not read).

    When what the unknown members hold is one default weight each, they keep it. Otherwise
    how it is split is not known, and the worst split is assumed: all of it on the first of
    them (a data node before garbd), the others 0; concentrating weight never leaves more
    headroom, so the answer is never more hopeful than the cluster. A total below the known
    weights (readings of different moments) is not used.
    """
    members = list(members)
    unknown = set(unknown)
    if total is None or not unknown:
        return Weighted(tuple(members))
    known = sum(m.weight for m in members if m.name not in unknown)
    rest = total - known
    count = sum(1 for m in members if m.name in unknown)
    if rest < 0:
        return Weighted(tuple(members), rest, inconsistent=True)
    if rest == count * PC_WEIGHT_DEFAULT:
        return Weighted(
            tuple(
                replace(m, weight=PC_WEIGHT_DEFAULT) if m.name in unknown else m for m in members
            ),
            rest,
        )
    first = next(m.name for m in members if m.name in unknown)
    weighted = tuple(
        replace(m, weight=rest if m.name == first else 0) if m.name in unknown else m
        for m in members
    )
    return Weighted(weighted, rest, worst_case=True)


def _one_by_one(members: list[Member]) -> int:
    """Failures survived one at a time when the worst member fails at each step.

    A step is fatal when the member that fails holds at least half of the current weight
    (``2 w >= W``: the others no longer hold more than half) or is the last data node. The
    worst sequence reaches a fatal step soonest, so the answer is the fewer of:

    - ``d - 1`` steps: every data node but one fails, then the last one;
    - ``k`` steps: the heaviest members but the very heaviest fail, heaviest first, until
      what is left weighs at most twice the heaviest, which then fails. (Any other choice
      of ``k`` members and a last one leaves at least as much weight against a member at
      most as heavy.)

    A closed form, linear after a sort: no recursion, and no search over who fails, however
    many members a node claims.
    """
    data = sum(1 for member in members if not member.arbitrator)
    if data == 0:
        return 0
    weights = sorted((member.weight for member in members), reverse=True)
    heaviest, left = weights[0], sum(weights)
    steps = 0
    for weight in weights[1:]:
        if left <= 2 * heaviest:
            break
        left -= weight
        steps += 1
    return min(data - 1, steps)


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

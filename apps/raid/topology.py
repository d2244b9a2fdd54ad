"""What a (nested) md-RAID stack can still lose: per array, per tree, per failure domain.

Pure module: no Django, no I/O. Arrays that are members of other arrays (``md99`` over
``md1``..``md5``) form a tree; the leaves are disks or partitions.

The rules (headroom per level, slots, failure domains, bounded work) are ``Topology``'s;
where this sits in a RAID report: docs/architecture.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from itertools import combinations

from apps.raid.bounds import Budget
from apps.raid.parse_mdadm import Detail
from apps.raid.parse_mdstat import Array, Mdstat
from apps.raid.parse_mdstat import parse as parse_mdstat
from apps.raid.raid10 import copy_groups, copy_groups_cost

__all__ = [
    "MAX_DOMAIN_SETS",
    "ArrayHeadroom",
    "DomainHeadroom",
    "Topology",
    "describe_domains",
    "describe_headroom",
    "disk_of",
    "domain_of",
    "survivable_domain_failures",
]

_TOLERANCE = {"raid4": 1, "raid5": 1, "raid6": 2}
MAX_DOMAIN_SETS = 200_000
_PARTITION = re.compile(
    r"((?:sd|hd|vd|xvd)[a-z]+)[0-9]+|((?:nvme[0-9]+n[0-9]+|mmcblk[0-9]+|loop[0-9]+))p[0-9]+",
    re.ASCII,
)


def disk_of(device: str) -> str | None:
    """The whole disk a partition belongs to (``sdc1`` -> ``sdc``), or None for a non-partition."""
    match = _PARTITION.fullmatch(device)
    return (match.group(1) or match.group(2)) if match else None


def domain_of(device: str, domains: Mapping[str, str]) -> str:
    """The failure domain of a leaf device; unmapped devices are their own domain."""
    if device in domains:
        return domains[device]
    disk = disk_of(device)
    if disk is not None and disk in domains:
        return domains[disk]
    return device


@dataclass(frozen=True)
class ArrayHeadroom:
    """How many more leaf-device failures ``array`` survives, worst case, and its sub-arrays."""

    array: str
    level: str | None
    running: bool
    more_failures: int  # 0 when not running
    placement_known: bool
    designed_tolerance: int = 0  # slot failures it survives with every slot up
    children: tuple[ArrayHeadroom, ...] = ()

    @property
    def redundant_by_design(self) -> bool:
        """True when this array or one below it was built to survive a failure."""
        return self.designed_tolerance > 0 or any(c.redundant_by_design for c in self.children)


@dataclass(frozen=True)
class DomainHeadroom:
    """How many failure domains may all fail with ``array`` still running (worst case)."""

    array: str
    running: bool
    domains: tuple[str, ...]  # domains holding a working leaf, sorted
    survivable: int  # EVERY set of this many domains may fail; 0 when not running
    fatal_alone: tuple[str, ...]  # each of these failing alone stops the array
    smallest_fatal_set: tuple[str, ...]  # one smallest set of domains that stops it
    complete: bool = True  # False when the search budget ran out: survivable is a lower bound


class _Node:
    """One array with its slots resolved: the evaluator behind the public functions."""

    def __init__(self, array: Array, detail: Detail | None, budget: Budget) -> None:
        self.name = array.name
        self.budget = budget
        self.level = array.level
        self.members = [m.device for m in array.members]
        # (slot, device) for the members that are up now; slot None when placement is unknown
        self.working: list[tuple[int | None, str]] = []
        self.dead_slots: set[int] = set()
        self.missing: int | None = None  # raid4/5/6: the kernel's degraded count
        self.slots = 0
        self.placement_known = True
        self._layout: str | None = None
        self._groups: frozenset[frozenset[int]] | None = None
        self.running = array.state == "active" and self.level is not None
        if not self.running:
            return
        if self.level in {"raid0", "linear", "faulty"}:
            self.slots = len(array.members)
            self.working = [(i, m.device) for i, m in enumerate(array.members) if not m.faulty]
            self.dead_slots = {i for i, m in enumerate(array.members) if m.faulty}
        else:
            if array.status is None:  # no "[n/m] [UU]" (a cut text): listed members count as up
                n = len([m for m in array.members if not m.faulty and not m.spare])
                array = replace(array, status="U" * n, raid_disks=n, active_disks=n)
            self._place(array, detail)
            self._layout = array.raid10_layout
        self.running = self.slots > 0 and self.alive_with(set())

    @property
    def groups(self) -> frozenset[frozenset[int]]:
        """raid10 copy groups, worked out (and paid for) when first needed."""
        if self.level != "raid10":
            return frozenset()
        if self._groups is None:
            self.budget.spend(copy_groups_cost(self._layout, self.slots))
            self._groups = copy_groups(self._layout, self.slots)
        return self._groups

    def _place(self, array: Array, detail: Detail | None) -> None:
        status = array.status or ""
        self.slots = len(status)
        self.dead_slots = {i for i, c in enumerate(status) if c == "_"}
        if self.level in _TOLERANCE and array.raid_disks is not None:
            # raid4/5/6 fail on the kernel's degraded count, which [n/m] prints and which the
            # [UU_] string overstates while a reshape moves between geometries.
            degraded = max(array.raid_disks - (array.active_disks or 0), 0)
            self.missing = min(len(self.dead_slots), degraded)
        candidates = [m for m in array.members if not m.faulty and not m.spare]
        up_slots = [i for i, c in enumerate(status) if c == "U"]
        if detail is not None:
            slots = {m.device: detail.slot_of(m.device) for m in candidates}
        else:
            slots = {m.device: m.role for m in candidates}
        placed = [(slots[m.device], m.device) for m in candidates]
        up = [(slot, device) for slot, device in placed if slot is not None and slot < self.slots]
        taken = [slot for slot, _ in up]
        consistent = len(taken) == len(set(taken)) and {
            slot for slot in taken if status[slot] == "U"
        } == set(up_slots)
        if detail is None:
            consistent = consistent and len(up) == len(candidates)
        if consistent:
            self.working = [(slot, device) for slot, device in up if status[slot] == "U"]
        elif self.level != "raid10" and len(candidates) == len(up_slots):
            # Mirrors and parity arrays are symmetric: which member holds which slot is moot.
            self.working = [(slot, m.device) for slot, m in zip(up_slots, candidates, strict=True)]
        else:
            self.placement_known = False
            self.working = [(None, m.device) for m in candidates]

    def alive_with(self, dead: set[int]) -> bool:
        """Whether the array runs with these slots down (on top of those down already)."""
        down = self.dead_slots | dead
        if self.level in {"raid1", "multipath"}:
            return len(down) < self.slots
        if self.level in _TOLERANCE:
            missing = len(self.dead_slots) if self.missing is None else self.missing
            return missing + len(dead - self.dead_slots) <= _TOLERANCE[self.level]
        if self.level == "raid10":
            groups = self.groups
            self.budget.spend(len(groups))
            return not any(group <= down for group in groups)
        return not down  # raid0, linear, faulty

    def designed_tolerance(self) -> int:
        """How many slot failures the array survives when all its slots are up."""
        if self.level in {"raid1", "multipath"}:
            return max(self.slots - 1, 0)
        if self.level in _TOLERANCE:
            return _TOLERANCE[self.level]
        if self.level == "raid10" and self.groups:
            return min(len(group) for group in self.groups) - 1
        return 0

    def kill_threshold(self) -> int:
        """The fewest further slots (of those up) whose loss stops the array."""
        up = self.slots - len(self.dead_slots)
        if self.level in {"raid1", "multipath"}:
            return up
        if self.level in _TOLERANCE:
            missing = len(self.dead_slots) if self.missing is None else self.missing
            return _TOLERANCE[self.level] + 1 - missing
        if self.level == "raid10":
            return min(len(group - self.dead_slots) for group in self.groups)
        return 1


@dataclass(frozen=True)
class _Step:
    """One array of a plan, with where each of its working members leads.

    ``parts`` holds ``(slot, device, child)``: ``child`` is the index in the plan of the
    member array's own step, -1 for a disk or partition, -2 for an array that is already on
    the way down (an array listed inside itself counts as lost).
    """

    name: str
    parts: tuple[tuple[int | None, str, int], ...]


_LEAF, _LOOP = -1, -2


class Topology:
    """The arrays of one host as a forest; evaluates which failure sets stop an array.

    Every evaluation is paid from ``budget`` (one ``bounds.Budget`` per report); past it,
    ``bounds.TooLarge`` is raised.

    **How many more failures an array survives** is a worst-case number: the largest ``m`` such
    that EVERY set of ``m`` further leaf-device failures leaves the array running. Already failed,
    missing or rebuilding members count as lost; spares count for nothing (a spare only helps
    after a rebuild, which takes hours). Per level, for the slots that are still up:

    - RAID-1 / multipath: runs while one slot is up, so it survives ``up - 1`` more.
    - RAID-4/5: one slot may be missing, RAID-6: two; minus those already missing.
    - RAID-0 / linear: every member must be up: 0 for disks; over arrays, the minimum of its
      children, since losing any one child stops it.
    - RAID-10: exact for the md driver's layouts. The "copy groups" of ``apps/raid/raid10.py``
      (slot sets holding every copy of some chunk: near, far and offset, with n copies) decide:
      a failure set kills the array iff it covers a group, so it survives
      ``min over groups of (live slots in the group) - 1`` more slot failures.

    **Slots.** ``/proc/mdstat`` prints each member's descriptor number, which equals its slot only
    for arrays whose members were never replaced. With ``mdadm --detail`` for the array its
    ``RaidDevice`` column is used. Without it, the numbers are used when they are consistent with
    the ``[UU_]`` string (distinct, inside the array, every ``U`` slot taken); otherwise the
    placement is unknown and the array is judged pessimistically: any ``t`` of its non-faulty,
    non-spare members failing stops it, ``t`` being the smallest slot count that could
    (``placement_known`` is then False).

    **Failure domains.** ``domains`` maps leaf device names (``sdb``, ``sdc1``) to a domain
    (storage server, iSCSI target, enclosure). A partition not in the mapping inherits its disk's
    domain (``sdc1`` -> ``sdc``, ``nvme0n1p2`` -> ``nvme0n1``); any other unmapped device is its
    own domain. Only domains holding a working leaf count. The number of domains that may fail is
    again worst case (EVERY set of that many), found by trying sets of growing size.

    **Bounded work.** Nothing here recurses: every walk of the tree is an explicit post-order plan
    (``_plan``), and every step is paid from the topology's ``bounds.Budget``; a search that would
    cost more raises ``bounds.TooLarge`` (the report then says "too large to judge").
    """

    def __init__(
        self,
        mdstat: Mdstat,
        details: Mapping[str, Detail] | None = None,
        budget: Budget | None = None,
    ) -> None:
        details = details or {}
        self.budget = budget or Budget()
        self.nodes = {
            a.name: _Node(a, details.get(a.name) or details.get(f"/dev/{a.name}"), self.budget)
            for a in mdstat.arrays
        }
        self._order = [a.name for a in mdstat.arrays]
        self._plans: dict[str, tuple[_Step, ...]] = {}
        self._kills: dict[str, tuple[int, frozenset[str]]] = {}
        self._alive: dict[str, bool] = {}

    @classmethod
    def from_text(cls, mdstat_text: str) -> Topology:
        return cls(parse_mdstat(mdstat_text))

    def _plan(self, name: str) -> tuple[_Step, ...]:
        """The arrays under ``name`` in post-order (children first, ``name`` last), walked
        with an explicit stack; each array is entered once per path that reaches it."""
        if name in self._plans:
            return self._plans[name]
        steps: list[_Step] = []
        # frame: (array, arrays on the way down, next member index, parts so far)
        stack: list[tuple[str, frozenset[str], list[int], list[tuple[int | None, str, int]]]]
        stack = [(name, frozenset({name}), [0], [])]
        while stack:
            array, path, index, parts = stack[-1]
            working = self.nodes[array].working
            if index[0] < len(working):
                slot, device = working[index[0]]
                index[0] += 1
                self.budget.spend()
                if device not in self.nodes:
                    parts.append((slot, device, _LEAF))
                elif device in path:
                    parts.append((slot, device, _LOOP))
                else:
                    parts.append((slot, device, _LEAF))  # replaced by the child's index
                    stack.append((device, path | {device}, [0], []))
                continue
            stack.pop()
            steps.append(_Step(array, tuple(parts)))
            if stack:
                _, _, _, above = stack[-1]
                slot, device, _ = above[-1]
                above[-1] = (slot, device, len(steps) - 1)
        plan = tuple(steps)
        self._plans[name] = plan
        return plan

    def children(self, name: str) -> list[str]:
        """The member arrays of ``name`` that are up (an array inside itself left out)."""
        return [d for _, d in self.nodes[name].working if d in self.nodes and d != name]

    def roots(self) -> list[str]:
        """Arrays that are not a member of another array, in mdstat order."""
        members = {d for node in self.nodes.values() for d in node.members if d != node.name}
        return [name for name in self._order if name not in members]

    def leaves(self, name: str) -> set[str]:
        """The working disks and partitions under ``name``."""
        return {
            device
            for step in self._plan(name)
            for _, device, child in step.parts
            if child == _LEAF and device not in self.nodes
        }

    def alive(self, name: str, dead_leaves: frozenset[str]) -> bool:
        """Whether ``name`` runs when ``dead_leaves`` fail (on top of what failed already)."""
        if not dead_leaves and name in self._alive:
            return self._alive[name]
        plan = self._plan(name)
        up: list[bool] = []
        for step in plan:
            node = self.nodes[step.name]
            self.budget.spend(len(step.parts) + 1)
            if not node.running:
                up.append(False)
                continue
            lost = [
                slot
                for slot, device, child in step.parts
                if device in dead_leaves or child == _LOOP or (child >= 0 and not up[child])
            ]
            if not node.placement_known:
                up.append(len(lost) < node.kill_threshold())
            else:
                up.append(node.alive_with({slot for slot in lost if slot is not None}))
        if not dead_leaves:
            self._alive[name] = up[-1]
        return up[-1]

    def kill_cost(self, name: str) -> int:
        """The fewest leaf failures that stop ``name`` (0 if it is not running)."""
        return self._kill(name)[0]

    def _kill(self, name: str, lost: frozenset[str] = frozenset()) -> tuple[int, frozenset[str]]:
        """A cheapest set of leaves whose failure stops ``name``, and its size; the leaves in
        ``lost`` cost nothing (they are counted as gone).

        Exact when no leaf sits under two arrays, which /proc/mdstat guarantees.
        """
        if not lost and name in self._kills:
            return self._kills[name]
        found: list[tuple[int, frozenset[str]]] = []
        for step in self._plan(name):
            found.append(self._kill_step(step, found, lost))
        if not lost:
            self._kills[name] = found[-1]
        return found[-1]

    def headroom_if_lost(self, name: str, lost: frozenset[str]) -> int | None:
        """Further leaf failures ``name`` survives once the leaves in ``lost`` (disks SMART
        calls failing) have failed too; None when losing them would stop it."""
        if not self.alive(name, lost):
            return None
        cost, _ = self._kill(name, lost)
        return max(cost - 1, 0)

    def _kill_step(
        self,
        step: _Step,
        found: list[tuple[int, frozenset[str]]],
        lost: frozenset[str] = frozenset(),
    ) -> tuple[int, frozenset[str]]:
        node = self.nodes[step.name]
        self.budget.spend(len(step.parts) + 1)
        if not node.running:
            return 0, frozenset()
        parts: dict[int | None, list[tuple[int, frozenset[str]]]] = {}
        for slot, device, child in step.parts:
            if child == _LOOP:  # an array listed as its own member: treat as lost
                part: tuple[int, frozenset[str]] = (0, frozenset())
            elif child >= 0:
                part = found[child]
            elif device in lost:
                part = (0, frozenset())
            else:
                part = (1, frozenset({device}))
            parts.setdefault(slot, []).append(part)
        if node.level == "raid10" and node.placement_known:
            groups = sorted(node.groups, key=sorted)
            self.budget.spend(sum(len(group) for group in groups))
            options = [
                [p for slot in sorted(group - node.dead_slots) for p in parts.get(slot, [])]
                for group in groups
            ]
            chosen = min(options, key=lambda o: sum(c for c, _ in o))
        else:
            flat = sorted((p for values in parts.values() for p in values), key=lambda p: p[0])
            whole = node.level in {"raid1", "multipath"} and node.placement_known
            chosen = flat if whole else flat[: node.kill_threshold()]
        self.budget.spend(sum(len(leaves) for _, leaves in chosen))
        return sum(c for c, _ in chosen), frozenset().union(*(leaves for _, leaves in chosen))

    def headroom(self, name: str) -> ArrayHeadroom:
        """``name`` and the arrays below it, each with its worst-case headroom."""
        built: list[ArrayHeadroom] = []
        for step in self._plan(name):
            node = self.nodes[step.name]
            children = tuple(built[child] for _, _, child in step.parts if child >= 0)
            built.append(
                ArrayHeadroom(
                    array=step.name,
                    level=node.level,
                    running=self.alive(step.name, frozenset()),
                    more_failures=max(self.kill_cost(step.name) - 1, 0),
                    placement_known=node.placement_known
                    and all(c.placement_known for c in children),
                    designed_tolerance=node.designed_tolerance(),
                    children=children,
                )
            )
        return built[-1]

    def domain_headroom(
        self, name: str, domains: Mapping[str, str], max_sets: int = MAX_DOMAIN_SETS
    ) -> DomainHeadroom:
        """Which failure domains ``name`` can lose, worst case.

        When every domain holds one leaf, the cheapest kill set answers at once; otherwise
        domain sets of growing size are tried, at most ``max_sets`` of them. Past that
        number the answer is the size proven safe so far (``complete`` is then False); past
        the budget, ``bounds.TooLarge``.
        """
        by_domain: dict[str, set[str]] = {}
        for leaf in self.leaves(name):
            by_domain.setdefault(domain_of(leaf, domains), set()).add(leaf)
        names = tuple(sorted(by_domain))
        if not self.alive(name, frozenset()):
            return DomainHeadroom(name, False, names, 0, (), ())
        fatal_alone = tuple(d for d in names if not self.alive(name, frozenset(by_domain[d])))
        if all(len(leaves) == 1 for leaves in by_domain.values()):
            cost, leaves = self._kill(name)
            domain = {next(iter(v)): d for d, v in by_domain.items()}
            fatal = tuple(sorted(domain[leaf] for leaf in leaves))
            return DomainHeadroom(name, True, names, max(cost - 1, 0), fatal_alone, fatal)
        tried = 0
        for size in range(1, len(names) + 1):
            for chosen in combinations(names, size):
                tried += 1
                if tried > max_sets:
                    return DomainHeadroom(name, True, names, size - 1, fatal_alone, (), False)
                dead = frozenset().union(*(by_domain[d] for d in chosen))
                if not self.alive(name, dead):
                    return DomainHeadroom(name, True, names, size - 1, fatal_alone, chosen)
        return DomainHeadroom(name, True, names, len(names), fatal_alone, ())


def survivable_domain_failures(mdstat_text: str, domains: Mapping[str, str], array: str) -> int:
    """How many failure domains may ALL fail with ``array`` still running, worst case.

    ``domains`` maps member device names (``sdb``, ``sdc1``) to a domain; unmapped devices are
    each their own domain. ``array`` is ``md99`` (``/dev/md99`` works too). Returns 0 when the
    array cannot lose any domain or is not running. Raises ``ParseError`` for unreadable text
    and ``KeyError`` for an array that is not in it.
    """
    topology = Topology.from_text(mdstat_text)
    array = array.removeprefix("/dev/")
    if array not in topology.nodes:
        raise KeyError(array)
    return topology.domain_headroom(array, domains).survivable


def describe_domains(
    headroom: DomainHeadroom, noun: str = "failure domain", plural: str | None = None
) -> str:
    """One sentence, e.g. "md99 survives the loss of any 2 of the 3 storage servers"."""
    plural = plural or f"{noun}s"
    total = len(headroom.domains)
    if not headroom.running:
        return f"{headroom.array} is not running"
    if headroom.survivable == 0 and headroom.fatal_alone:
        fatal = ", ".join(headroom.fatal_alone)
        return f"{headroom.array} cannot lose any {noun}: losing {fatal} alone would stop it"
    if headroom.survivable >= total:
        return f"{headroom.array} survives the loss of all {total} {plural}"
    lost = plural if total > 1 else noun
    sentence = (
        f"{headroom.array} survives the loss of any {headroom.survivable} of the {total} {lost}"
    )
    if not headroom.complete:
        return f"{sentence} (at least; too many combinations to try them all)"
    if len(headroom.smallest_fatal_set) >= total:
        return sentence  # only losing every domain stops it: nothing to add
    fatal_set = " and ".join(headroom.smallest_fatal_set)
    return f"{sentence}; losing {fatal_set} together would stop it"


def describe_headroom(headroom: ArrayHeadroom, noun: str = "disk") -> str:
    """One sentence about leaf failures, e.g. "md99 survives any 2 more disk failures"."""
    if not headroom.running:
        return f"{headroom.array} is not running"
    if headroom.more_failures == 0:
        return f"{headroom.array} cannot lose any more {noun}s"
    failures = "failure" if headroom.more_failures == 1 else "failures"
    guess = "" if headroom.placement_known else " (member slots unknown: worst case assumed)"
    return f"{headroom.array} survives any {headroom.more_failures} more {noun} {failures}{guess}"

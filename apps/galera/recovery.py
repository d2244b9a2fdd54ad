"""Recovery advice for a Galera cluster that lost its Primary component: which node to start
from, with which command, and why. Read-only: Vigil names the steps, people run them.

Pure module: no Django, no I/O. Each node's last known state is a ``Position`` (a running
node's wsrep status, or a stopped node's ``grastate.dat`` with the position
``mysqld --wsrep-recover`` found when its seqno is -1); ``advise`` turns them into an
``Advice``: every node stopped (``galera_new_cluster`` on the most advanced), a partition
(``pc.bootstrap=YES`` on the most advanced of the heaviest component), a missing position
(waiting, never a guess), with the ties and contradictions it meets. The procedure is MariaDB's
and Codership's (``documented.py``); what the user sees: docs/galera.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

NIL_UUID = "00000000-0000-0000-0000-000000000000"
GRASTATE = "/var/lib/mysql/grastate.dat"
#: What a person runs on a stopped node to learn its position (shown for polled nodes).
FIND_POSITION = (
    f"cat {GRASTATE}; if its seqno is -1: galera_recovery "
    "(or: mysqld --wsrep-recover, then read 'WSREP: Recovered position' in the error log)"
)
BOOTSTRAP_CLEAN = "galera_new_cluster"
START = "systemctl start mariadb"
SET_SAFE = f"sed -i 's/^safe_to_bootstrap: 0/safe_to_bootstrap: 1/' {GRASTATE}"
PC_BOOTSTRAP = "SET GLOBAL wsrep_provider_options='pc.bootstrap=YES';"


@dataclass(frozen=True)
class Position:
    """What Vigil last knew of one data node.

    ``running``: True when its mysqld answered with wsrep status, False when it is known to be
    stopped (the push agent said so, with its grastate.dat), None when Vigil has no word.
    """

    name: str
    running: bool | None = None
    # A running node (wsrep status).
    primary: bool | None = None
    last_committed: int | None = None
    component: str | None = None  # who it sees (e.g. its wsrep_incoming_addresses); None: alone
    component_weight: int | None = None  # weight (or members) of that component; None: 1
    # A stopped node (grastate.dat, then the recovered position when seqno is -1).
    seqno: int | None = None
    safe_to_bootstrap: bool | None = None
    recovered_seqno: int | None = None
    recovered_by: str = ""
    # Either: wsrep_local_state_uuid, or grastate's (or the recovered) uuid.
    uuid: str | None = None

    @property
    def position(self) -> int | None:
        """The last transaction it holds, or None when unknown (-1 not recovered yet)."""
        if self.running:
            return self.last_committed
        if self.seqno is not None and self.seqno >= 0:
            return self.seqno
        return self.recovered_seqno

    @property
    def source(self) -> str:
        if self.running:
            return "wsrep_last_committed"
        if self.seqno is not None and self.seqno >= 0:
            return "grastate.dat"
        return self.recovered_by or "recovered position"


@dataclass(frozen=True)
class Step:
    node: str
    command: str
    why: str


@dataclass(frozen=True)
class Advice:
    """What to do, with the reason. ``situation``: primary, all_stopped, partition, waiting."""

    situation: str
    summary: str
    steps: tuple[Step, ...] = ()
    waiting_for: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    loses: str = ""
    chosen: str | None = None
    reasons: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, object]:
        return {
            "situation": self.situation,
            "summary": self.summary,
            "chosen": self.chosen,
            "steps": [{"node": s.node, "command": s.command, "why": s.why} for s in self.steps],
            "waiting_for": list(self.waiting_for),
            "left_out": list(self.left_out),
            "warnings": list(self.warnings),
            "loses": self.loses,
            "reasons": list(self.reasons),
        }


def _names(names: Iterable[str]) -> str:
    names = list(names)
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _waiting(nodes: list[Position], why: str) -> Advice:
    names = tuple(n.name for n in nodes)
    steps = tuple(Step(n.name, FIND_POSITION, "to learn its position") for n in nodes)
    return Advice(
        "waiting",
        "Waiting for " + _names(f"{n}'s position" for n in names) + f": {why}",
        steps=steps,
        waiting_for=names,
    )


def _cluster_uuid(nodes: list[Position], expected: str | None) -> tuple[str | None, list[str]]:
    """The cluster's state uuid (``expected``, else the one most nodes hold) and warnings."""
    if expected:
        return expected, []
    counts: dict[str, int] = {}
    for node in nodes:
        if node.uuid and node.uuid != NIL_UUID:
            counts[node.uuid] = counts.get(node.uuid, 0) + 1
    if not counts:
        return None, []
    best = max(counts.values())
    top = sorted(uuid for uuid, count in counts.items() if count == best)
    if len(top) > 1:
        return None, [
            f"The nodes hold {len(top)} cluster state uuids as many times each ({_names(top)}): "
            "which one is this cluster's cannot be told from them."
        ]
    return top[0], []


def advise(positions: Iterable[Position], cluster_uuid: str | None = None) -> Advice:
    """Recovery advice from each data node's last known position (garbd holds no data and is
    not passed). ``cluster_uuid``: the state uuid Vigil last saw the cluster at, if known."""
    nodes = sorted(positions, key=lambda n: n.name)
    if not nodes:
        return Advice("waiting", "No data node is known.")
    if any(n.running and n.primary for n in nodes):
        primary = [n.name for n in nodes if n.running and n.primary]
        stopped = [n.name for n in nodes if not (n.running and n.primary)]
        steps = tuple(
            Step(name, START, "it joins the Primary component (IST or SST)") for name in stopped
        )
        return Advice(
            "primary",
            f"The cluster is Primary ({_names(primary)}): nothing to bootstrap."
            + (f" Start {_names(stopped)} normally, one at a time." if stopped else ""),
            steps=steps,
        )
    unknown = [n for n in nodes if n.running is None]
    if unknown:
        blocked = [n for n in nodes if n.running is None or n.position is None]
        return _waiting(
            blocked,
            "Vigil has no word from "
            + _names(n.name for n in unknown)
            + ", which may still be running (even Primary) or hold the most recent "
            "transactions.",
        )
    running = [n for n in nodes if n.running]
    if running:
        return _partition(nodes, running)
    return _all_stopped(nodes, cluster_uuid)


def _all_stopped(nodes: list[Position], expected_uuid: str | None) -> Advice:
    uuid, warnings = _cluster_uuid(nodes, expected_uuid)
    if uuid is None:
        return Advice(
            "waiting",
            "Every node is stopped, but the cluster's state uuid cannot be told.",
            warnings=tuple(warnings) or ("No node reports a cluster state uuid.",),
        )
    left_out = [n for n in nodes if n.uuid != uuid]
    members = [n for n in nodes if n.uuid == uuid]
    missing = [n for n in members if n.position is None]
    if missing:
        return _waiting(
            missing,
            "its grastate.dat says seqno -1 (it did not stop cleanly) and its recovered "
            "position is not known yet; bootstrapping without it could drop what only it holds.",
        )
    if not members:
        return Advice("waiting", "No stopped node holds the cluster's state.", warnings=())
    top = max(n.position or 0 for n in members)
    best = [n for n in members if n.position == top]
    safe_best = [n for n in best if n.safe_to_bootstrap]
    chosen = (safe_best or best)[0]
    warnings += _bootstrap_warnings(members, best, chosen, top)
    reasons = [
        f"{n.name}: seqno {n.position} ({n.source})"
        + (", safe_to_bootstrap: 1" if n.safe_to_bootstrap else "")
        for n in members
    ]
    steps = _bootstrap_steps(members, chosen, top)
    for node in left_out:
        warnings.append(
            f"{node.name} holds another state uuid ({node.uuid or 'none'}): left out; once the "
            "cluster is Primary it joins by a full state transfer (SST) if started."
        )
    return Advice(
        "all_stopped",
        f"Every node is stopped: bootstrap {chosen.name} (seqno {top}) with "
        f"{BOOTSTRAP_CLEAN}, then start the others one at a time.",
        steps=tuple(steps),
        left_out=tuple(n.name for n in left_out),
        warnings=tuple(warnings),
        chosen=chosen.name,
        reasons=tuple(reasons),
    )


def _bootstrap_warnings(
    members: list[Position], best: list[Position], chosen: Position, top: int
) -> list[str]:
    """What to know about safe_to_bootstrap (several nodes say it, or one behind ``top``)
    and about nodes tied at ``top``."""
    warnings = []
    safe = [n for n in members if n.safe_to_bootstrap]
    if len(safe) > 1:
        warnings.append(
            f"{_names(n.name for n in safe)} all say safe_to_bootstrap: 1; only one node can "
            "have left the cluster last: the seqnos decide."
        )
    for node in safe:
        if node.position is not None and node.position < top:
            warnings.append(
                f"{node.name} says safe_to_bootstrap: 1 but holds seqno {node.position}, "
                f"behind {top}: starting from it would drop {top - node.position} "
                "transactions; the seqnos decide."
            )
    if len(best) > 1:
        warnings.append(
            f"{_names(n.name for n in best)} hold the same seqno {top}: any of them may "
            f"start the cluster; Vigil names {chosen.name}"
            + (" (safe_to_bootstrap: 1)." if chosen.safe_to_bootstrap else " (first by name).")
        )
    return warnings


def _bootstrap_steps(members: list[Position], chosen: Position, top: int) -> list[Step]:
    """Bootstrap ``chosen`` (marked safe first when it is not), then start the others."""
    steps: list[Step] = []
    if not chosen.safe_to_bootstrap:
        steps.append(
            Step(
                chosen.name,
                SET_SAFE,
                "no node has safe_to_bootstrap: 1 (none left last cleanly); set it on this "
                "node only",
            )
        )
    steps.append(
        Step(
            chosen.name,
            BOOTSTRAP_CLEAN,
            f"it holds the highest seqno, {top}: a new Primary component from its data",
        )
    )
    for node in members:
        if node is not chosen:
            steps.append(Step(node.name, START, "one at a time, after the previous one is Synced"))
    return steps


def _partition(nodes: list[Position], running: list[Position]) -> Advice:
    missing = [n for n in nodes if n.position is None]
    if missing:
        return _waiting(
            missing,
            "a stopped node may have committed past the survivors in a component of its own; "
            "promoting one of them without knowing could drop those transactions.",
        )
    heaviest, warnings = _heaviest_component(running)
    top = max(n.last_committed or 0 for n in heaviest)
    best = [n for n in heaviest if n.last_committed == top]
    chosen = best[0]
    if len(best) > 1:
        warnings.append(
            f"{_names(n.name for n in best)} hold the same wsrep_last_committed {top}: any "
            f"may be promoted; Vigil names {chosen.name} (first by name)."
        )
    loses = _what_promoting_loses(nodes, heaviest, chosen, top)
    reasons = [
        f"{n.name}: "
        + (
            f"running, non-Primary, wsrep_last_committed {n.last_committed}"
            if n.running
            else f"stopped, seqno {n.position} ({n.source})"
        )
        for n in nodes
    ]
    steps = [
        Step(
            chosen.name,
            PC_BOOTSTRAP,
            f"most advanced ({top}) of the heaviest component: it becomes Primary",
        )
    ]
    steps += [
        Step(n.name, START, "one at a time, after the Primary component is back")
        for n in nodes
        if not n.running
    ]
    return Advice(
        "partition",
        f"No Primary component, {_names(n.name for n in running)} still running: promote "
        f"{chosen.name} (wsrep_last_committed {top}) with pc.bootstrap=YES.",
        steps=tuple(steps),
        warnings=tuple(warnings),
        loses=loses,
        chosen=chosen.name,
        reasons=tuple(reasons),
    )


def _heaviest_component(running: list[Position]) -> tuple[list[Position], list[str]]:
    """The running nodes' heaviest component (of equal ones, the most advanced), and a
    warning when there was a tie."""
    components: dict[str, list[Position]] = {}
    for node in running:
        components.setdefault(node.component or f"alone:{node.name}", []).append(node)

    def weight(members: list[Position]) -> int:
        known = [n.component_weight for n in members if n.component_weight is not None]
        return max(known) if known else len(members)

    ranked = sorted(components.values(), key=weight, reverse=True)
    heaviest = ranked[0]
    warnings: list[str] = []
    ties = [c for c in ranked if weight(c) == weight(heaviest)]
    if len(ties) > 1:
        # Equal weight: the most advanced component's data is kept.
        heaviest = max(ties, key=lambda c: max(n.last_committed or 0 for n in c))
        warnings.append(
            f"{len(ties)} components weigh the same ({weight(heaviest)}): Vigil names the "
            "one whose node is most advanced."
        )
    return heaviest, warnings


def _what_promoting_loses(
    nodes: list[Position], heaviest: list[Position], chosen: Position, top: int
) -> str:
    """What promoting ``chosen`` (at ``top``) discards: the transactions of the nodes outside
    its component that are ahead of it, or nothing."""
    others = [n for n in nodes if n not in heaviest]
    ahead = [n for n in others if n.position is not None and n.position > top]
    loses_parts = []
    for node in ahead:
        loses_parts.append(
            f"{node.name} holds {(node.position or 0) - top} transactions past {top} "
            f"({node.source}): promoting {chosen.name} discards them (it then needs a full "
            "state transfer)"
        )
    other_running = [n for n in others if n.running]
    if not loses_parts:
        return f"Nothing committed: no other node is ahead of {chosen.name} ({top}); " + (
            f"{_names(n.name for n in other_running)} rejoin by IST once reconnected."
            if other_running
            else "the stopped nodes rejoin when started."
        )
    return "; ".join(loses_parts) + "."

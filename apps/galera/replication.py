"""What the Primary nodes' readings say about replication now: flow control, the receive and
send queues, a node whose data has diverged, members the group finds slow or has evicted.

Flow control and the queues are judged between readings (``rates``, and the collector's
earlier snapshots), never from the lifetime averages Galera also reports: those only for a node
that does not report the counters, and the reason says so (``documented.py``).

Pure module: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from apps.galera.parse_wsrep import WsrepStatus
from apps.lib.formats import interval
from apps.lib.thresholds import Notes, Spec

JOINING = ("join", "waiting")  # Joiner, Joining, Joined, Waiting on SST
NAMED = 5  # delayed or evicted members named in a reason; the figures hold them all


@dataclass(frozen=True)
class Thresholds:
    """Only thresholds are data; the rules are the code below."""

    flow_control_paused: float = 0.1  # share of the interval between two readings paused
    recv_queue: float = 10.0  # write-sets waiting, on two readings in a row
    send_queue: float = 10.0  # write-sets waiting to be sent, on two readings in a row
    recv_queue_growth_polls: int = 3  # rising on this many polls in a row (current included)
    recv_queue_growth_floor: float = 1.0  # ...and at least this long now
    cert_failures_per_minute: float = 10.0  # all nodes together
    #: Which thresholds a region or this cluster set (``apps.lib.thresholds.resolve``).
    notes: Notes = Notes()


def _share(percent: float) -> float:
    return percent / 100


def _percent(share: float) -> float:
    return round(share * 100, 6)


#: The thresholds a region or one cluster may set over the defaults (``Thresholds``).
SPECS = (
    Spec(
        "flow_control_paused_pct", "Paused by flow control, of the time", "%", 0.1, 100,
        field="flow_control_paused", to_field=_share, from_field=_percent,
    ),
    Spec("recv_queue", "Receive queue above, two polls", "write-sets", 0, 1_000_000),
    Spec("send_queue", "Send queue above, two polls", "write-sets", 0, 1_000_000),
    Spec("cert_failures_per_minute", "Certification failures at least", "a minute", 0.1, 1_000_000),
)  # fmt: skip


def over(thresholds: Thresholds, name: str, shown: str) -> str:
    """`` (over 5 write-sets: this cluster's threshold; default 10 write-sets)`` when a region
    or the cluster set the threshold ``name``, else ""."""
    note = thresholds.notes(name)
    return f" (over {shown}: {note})" if note else ""


@dataclass(frozen=True)
class Paused:
    """A node's flow control between its previous reading and this one."""

    share: float  # of the interval, 0..1 (rates.paused_share)
    seconds: float  # the interval
    sent: bool = False  # it asked for a pause in the interval (wsrep_flow_control_sent grew)


@dataclass(frozen=True)
class Reading:
    """One Primary node as the rules see it."""

    name: str
    status: WsrepStatus
    auto_evict: int | None = None  # its evs.auto_evict, when its provider options were read


@dataclass
class Findings:
    critical: list[str] = field(default_factory=list)
    warning: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)


def recv_queue_growing(values: Sequence[float | None], thresholds: Thresholds) -> bool:
    """The receive queue rose on each of the last polls (oldest first, current last); a gap
    (a poll that did not read it) breaks the run."""
    run = list(values)[-thresholds.recv_queue_growth_polls :]
    if len(run) < thresholds.recv_queue_growth_polls or any(v is None for v in run):
        return False
    rising = all(b > a for a, b in zip(run, run[1:], strict=False))  # type: ignore[operator]
    return rising and run[-1] >= thresholds.recv_queue_growth_floor  # type: ignore[operator]


def judge(
    nodes: Sequence[Reading],
    thresholds: Thresholds,
    *,
    names: Mapping[str, str] | None = None,
    flow_control: Mapping[str, Paused | None] | None = None,
    recv_queue_history: Mapping[str, Sequence[float | None]] | None = None,
    send_queue_history: Mapping[str, Sequence[float | None]] | None = None,
    notes: Mapping[str, Sequence[str]] | None = None,
) -> Findings:
    """The findings on the Primary ``nodes``. ``names``: node names by their
    ``wsrep_gcomm_uuid`` (to name delayed and evicted members); ``flow_control``: each node's
    pause since its previous reading; the histories: each node's earlier queue readings
    (``wsrep_local_recv_queue``/``_send_queue``), oldest first; ``notes``: what other concerns
    know of the nodes (an EBS volume out of burst credits), told with a flow-control warning."""
    found = Findings()
    _flow_control(nodes, thresholds, flow_control or {}, notes or {}, found)
    for node in nodes:
        _queues(node, thresholds, recv_queue_history or {}, send_queue_history or {}, found)
        _diverged(node, found)
    _evictions(nodes, names or {}, found)
    return found


def _flow_control(
    nodes: Sequence[Reading],
    thresholds: Thresholds,
    flow_control: Mapping[str, Paused | None],
    notes: Mapping[str, Sequence[str]],
    found: Findings,
) -> None:
    paused: list[tuple[str, Paused]] = []
    for node in nodes:
        status = node.status
        if status.flow_control_paused_ns is not None:
            now = flow_control.get(node.name)
            if now is not None and now.share > thresholds.flow_control_paused:
                paused.append((node.name, now))
        elif (
            status.flow_control_paused is not None
            and status.flow_control_paused > thresholds.flow_control_paused
        ):
            why = notes_for(node.name, notes)
            found.warning.append(
                f"{node.name} paused by flow control {status.flow_control_paused:.0%} of the "
                "time since it started or its last FLUSH STATUS (wsrep_flow_control_paused, an "
                "average: it does not report wsrep_flow_control_paused_ns)"
                + _over_share(thresholds)
                + (f"; {why}" if why else "")
            )
    shares = [p.share for p in flow_control.values() if p is not None]
    found.figures["flow_control_paused_share"] = round(max(shares), 4) if shares else None
    if not paused:
        return
    _, worst = max(paused, key=lambda item: item[1].share)
    text = (
        f"flow control paused replication {worst.share:.0%} of the last {interval(worst.seconds)}"
    )
    if len(paused) > 1:
        text += " (" + ", ".join(f"{name} {p.share:.0%}" for name, p in paused) + ")"
    text += _over_share(thresholds)
    senders = [
        n.name
        for n in nodes
        if n.status.requests_flow_control or ((p := flow_control.get(n.name)) and p.sent)
    ]
    if senders:
        text += f"; asked for by {', '.join(senders)}"
    why = notes_for(senders[0] if senders else paused[0][0], notes)
    if why:
        text += f"; {why}"
    found.warning.append(text)


def _over_share(thresholds: Thresholds) -> str:
    return over(thresholds, "flow_control_paused_pct", f"{thresholds.flow_control_paused:.1%}")


def notes_for(name: str, notes: Mapping[str, Sequence[str]]) -> str:
    """The node's own notes, or else the other nodes' (the slow one may be another)."""
    if notes.get(name):
        return "; ".join(notes[name])
    return "; ".join(f"{other}: {text}" for other, texts in notes.items() for text in texts)


def _queues(
    node: Reading,
    thresholds: Thresholds,
    recv_history: Mapping[str, Sequence[float | None]],
    send_history: Mapping[str, Sequence[float | None]],
    found: Findings,
) -> None:
    status = node.status
    queue = status.local_recv_queue
    earlier = list(recv_history.get(node.name, ()))
    if queue is None:
        average = status.local_recv_queue_avg
        if average is not None and average > thresholds.recv_queue:
            found.warning.append(
                f"{node.name} receive queue averages {average:g} since it started or its last "
                "FLUSH STATUS (it does not report wsrep_local_recv_queue)"
                + over(thresholds, "recv_queue", f"{thresholds.recv_queue:g}")
            )
    elif _sustained(queue, earlier, thresholds.recv_queue):
        found.warning.append(
            f"{node.name} receive queue {queue} write-sets, {earlier[-1]:g} at the previous poll"
            + over(thresholds, "recv_queue", f"{thresholds.recv_queue:g}")
        )
    elif recv_queue_growing([*earlier, queue], thresholds):
        run = [*earlier, queue][-thresholds.recv_queue_growth_polls :]
        steps = " → ".join(f"{v:g}" for v in run if v is not None)
        found.warning.append(f"{node.name} receive queue growing: {steps}")
    sent = status.local_send_queue
    earlier = list(send_history.get(node.name, ()))
    if sent is not None and _sustained(sent, earlier, thresholds.send_queue):
        found.warning.append(
            f"{node.name} send queue {sent} write-sets, {earlier[-1]:g} at the previous poll"
            + over(thresholds, "send_queue", f"{thresholds.send_queue:g}")
        )


def _sustained(value: float, earlier: Sequence[float | None], threshold: float) -> bool:
    """Above the threshold now and at the previous reading: a burst is not a backlog."""
    previous = earlier[-1] if earlier else None
    return value > threshold and previous is not None and previous > threshold


def _diverged(node: Reading, found: Findings) -> None:
    local, cluster = node.status.local_state_uuid, node.status.cluster_state_uuid
    if not local or not cluster or local.strip().lower() == cluster.strip().lower():
        return
    states = f"its state {local.strip()[:8]}… is not the cluster's {cluster.strip()[:8]}…"
    comment = (node.status.local_state_comment or "").strip().lower()
    if comment.startswith(JOINING):
        found.warning.append(f"{node.name} waits for a state transfer: {states}")
    else:
        found.critical.append(f"{node.name} has diverged from the cluster: {states}")


def _evictions(nodes: Sequence[Reading], names: Mapping[str, str], found: Findings) -> None:
    delayed: dict[str, dict[str, Any]] = {}
    evicted: dict[str, list[str]] = {}
    for node in nodes:
        for entry in node.status.evs_delayed or ():
            if entry.count < 1:
                continue
            seen = delayed.setdefault(
                entry.uuid, {"address": entry.address, "count": 0, "by": [], "evict_at": None}
            )
            seen["count"] = max(seen["count"], entry.count)
            seen["by"].append(node.name)
            if node.auto_evict:
                seen["evict_at"] = min(seen["evict_at"] or node.auto_evict, node.auto_evict)
        for uuid in node.status.evs_evict_list or ():
            evicted.setdefault(uuid, []).append(node.name)
    for uuid, seen in list(delayed.items())[:NAMED]:
        who = _member(uuid, seen["address"], names)
        count = f"{seen['count']} time" + ("" if seen["count"] == 1 else "s")
        if seen["evict_at"]:
            count += f", evicted at {seen['evict_at']} (evs.auto_evict)"
        found.warning.append(
            f"{who} is slow to answer the group: on the delayed list of "
            f"{', '.join(seen['by'])} ({count})"
        )
    if len(delayed) > NAMED:
        found.warning.append(f"{len(delayed) - NAMED} more members on delayed lists")
    for uuid, by in list(evicted.items())[:NAMED]:  # critical, as a node cut from the group is
        found.critical.append(
            f"{_member(uuid, '', names)} was evicted from the cluster (on the eviction list of "
            f"{', '.join(by)}): it cannot rejoin until it restarts"
        )
    if len(evicted) > NAMED:
        found.critical.append(f"{len(evicted) - NAMED} more members evicted")
    found.figures["delayed"] = {
        names.get(uuid, uuid): {"count": seen["count"], "by": seen["by"]}
        for uuid, seen in delayed.items()
    }
    found.figures["evicted"] = {names.get(uuid, uuid): by for uuid, by in evicted.items()}


def _member(uuid: str, address: str, names: Mapping[str, str]) -> str:
    if uuid in names:
        return names[uuid]
    return f"member {uuid[:8]}" + (f" ({address})" if address else "")

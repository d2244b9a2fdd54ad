"""The cluster as seen from all of its nodes, and the verdict on it.

``build_view(results)`` takes one ``NodeResult`` per configured node (the status it
answered, or the error the poll hit) and works out the Primary component, the members
and arbitrators it holds (garbd has no SQL port: arbitrators are the cluster size minus
the data nodes), which nodes are unreachable, which answer without being Galera nodes,
which report a non-Primary component, and whether the answers disagree (possible
split-brain); the members' weights add up to ``wsrep_cluster_weight`` where the nodes report it.
``cluster_verdict(view, ...)`` turns that into a ``Verdict``, with the replication rules of
``replication.py``.

Pure module: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from apps.galera.documented import PC_WEIGHT_DEFAULT
from apps.galera.parse_wsrep import ProviderOptions, WsrepStatus
from apps.galera.quorum import (
    FaultTolerance,
    Member,
    describe,
    fault_tolerance_after,
    with_total_weight,
)
from apps.galera.replication import Paused, Reading, Thresholds, judge, over
from apps.lib.status import Status, Verdict

NOT_GALERA = "not a Galera node"
DESYNCED_STATES = {"donor/desynced", "donor", "desynced"}


@dataclass(frozen=True)
class NodeResult:
    """What polling one node gave: its status, or the error that stopped the poll."""

    name: str
    status: WsrepStatus | None = None
    options: ProviderOptions | None = None
    error: str | None = None
    silent: bool = False  # a pushing node whose last report is too old (or none came)
    read_at: float | None = None  # when the status was read (Unix time), if known

    @property
    def reachable(self) -> bool:
        return self.error is None and self.status is not None and not self.silent


class NodeState(StrEnum):
    PRIMARY = "primary"
    NON_PRIMARY = "non-primary"
    UNREACHABLE = "unreachable"
    NOT_GALERA = "not-galera"
    DISCONNECTED = "disconnected"  # wsrep_connected=OFF: cut from the group
    SILENT = "silent"  # a pushing node that stopped reporting: unknown


@dataclass(frozen=True)
class NodeView:
    name: str
    state: NodeState
    detail: str  # the local state ("Synced"), the cluster status, or the error
    status: WsrepStatus | None = None
    weight: int = PC_WEIGHT_DEFAULT
    weight_known: bool = False  # read from its wsrep_provider_options
    auto_evict: int | None = None  # its evs.auto_evict


@dataclass(frozen=True)
class ClusterView:
    nodes: tuple[NodeView, ...]
    primary: tuple[str, ...]  # nodes in the (largest) Primary component
    non_primary: tuple[str, ...]
    unreachable: tuple[str, ...]
    not_galera: tuple[str, ...]
    disconnected: tuple[str, ...]  # wsrep_connected=OFF
    silent: tuple[str, ...]  # pushing nodes with no recent report
    cluster_size: int | None  # members of the Primary component, garbd included
    data_nodes: int  # data nodes in the Primary component
    arbitrators: int | None  # inferred: cluster_size - data_nodes
    members_seen: tuple[str, ...]  # incoming addresses of the Primary component
    inconsistencies: tuple[str, ...]  # why a split-brain is suspected
    tolerance: FaultTolerance | None  # None without a Primary component
    cluster_weight: int | None = None  # wsrep_cluster_weight of the Primary component
    weights: tuple[Member, ...] = ()  # the members counted, with the weights used
    weight_note: str | None = None  # how wsrep_cluster_weight changed the assumed weights

    @property
    def split_brain(self) -> bool:
        return bool(self.inconsistencies)

    @property
    def reachable(self) -> tuple[str, ...]:
        return tuple(node.name for node in self.nodes if node.state is not NodeState.UNREACHABLE)


def storable(text: str, limit: int = 2000) -> str:
    """Text a server sent (an error message) as the database can keep it and a page show
    it: NULs and bytes that are not UTF-8 escaped, at most ``limit`` characters."""
    text = text.replace("\x00", "\\x00")
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def classify(result: NodeResult) -> NodeView:
    if result.silent:
        return NodeView(result.name, NodeState.SILENT, storable(result.error or "no report"))
    if not result.reachable:
        return NodeView(result.name, NodeState.UNREACHABLE, storable(result.error or "no answer"))
    status = result.status
    assert status is not None
    options = result.options
    weight = options.pc_weight if options is not None else None
    extra: dict[str, Any] = {
        "weight": PC_WEIGHT_DEFAULT if weight is None else weight,
        "weight_known": weight is not None,
        "auto_evict": options.evs_auto_evict if options is not None else None,
    }
    if status.wsrep_rows == 0 or not status.is_galera:
        return NodeView(result.name, NodeState.NOT_GALERA, NOT_GALERA, status, **extra)
    if status.connected is not None and not status.is_connected:
        detail = f"wsrep_connected={status.connected}"
        if status.cluster_status:
            detail += f", {status.cluster_status}"
        return NodeView(result.name, NodeState.DISCONNECTED, storable(detail), status, **extra)
    if status.is_primary:
        detail = status.local_state_comment or "Primary"
        return NodeView(result.name, NodeState.PRIMARY, detail, status, **extra)
    detail = status.cluster_status or "cluster status unknown"
    return NodeView(result.name, NodeState.NON_PRIMARY, detail, status, **extra)


def _named(nodes: Iterable[NodeView], state: NodeState) -> tuple[str, ...]:
    return tuple(node.name for node in nodes if node.state is state)


def _conf_id(node: NodeView) -> int | None:
    conf_id = node.status.cluster_conf_id if node.status is not None else None
    if conf_id and conf_id.isascii() and conf_id.isdigit() and len(conf_id) <= 20:
        return int(conf_id)
    return None


def _outdated(readings: Sequence[tuple[NodeView, float | None]]) -> set[int]:
    """Positions of Primary readings that a later reading of the same cluster overtook: read
    earlier (a push from up to a minute ago) and showing an older configuration (a lower
    conf_id). They show the view before the last membership change, not a second component;
    readings taken at the same moment (one poll) never overtake each other."""
    outdated = set()
    for i, (node, at) in enumerate(readings):
        conf_id = _conf_id(node)
        if at is None or conf_id is None or node.status is None:
            continue
        for other, other_at in readings:
            other_conf_id = _conf_id(other)
            if (
                other_at is not None
                and other_conf_id is not None
                and other_at > at
                and other_conf_id > conf_id
                and other.status is not None
                and other.status.cluster_state_uuid == node.status.cluster_state_uuid
            ):
                outdated.add(i)
                break
    return outdated


def build_view(results: Iterable[NodeResult]) -> ClusterView:
    results = list(results)
    nodes = tuple(classify(result) for result in results)
    components = _primary_components(nodes, results)
    inconsistencies = _inconsistencies(components)
    component = max(components.values(), key=len) if components else []
    size, addresses = _size_and_addresses(component)
    members_seen = tuple(address for address in addresses if address)
    data_nodes = max(len(component), len(members_seen)) if component else 0
    if size is not None and data_nodes > size:
        data_nodes = size
    arbitrators = max(0, size - data_nodes) if size is not None else None
    tolerance = None
    # Nodes cut from the group that the component still counts (its view lags behind, or a
    # pushed report is older) are lost already: among the members it counts but we did not
    # see as Primary ones.
    disconnected = [node for node in nodes if node.state is NodeState.DISCONNECTED]
    unpolled = data_nodes - len(component)
    lost = [f"unpolled{i}" for i in range(min(len(disconnected), unpolled))]
    reported = [n.status.cluster_weight for n in component if n.status is not None]
    cluster_weight = max((w for w in reported if w is not None), default=None)
    members: list[Member] = []
    note = None
    if component:
        members, note = _weighted_members(component, unpolled, arbitrators or 0, cluster_weight)
        tolerance = fault_tolerance_after(members, lost)
        data_nodes -= len(lost)
    return ClusterView(
        nodes=nodes,
        primary=tuple(node.name for node in component),
        non_primary=_named(nodes, NodeState.NON_PRIMARY),
        unreachable=_named(nodes, NodeState.UNREACHABLE),
        not_galera=_named(nodes, NodeState.NOT_GALERA),
        disconnected=_named(nodes, NodeState.DISCONNECTED),
        silent=_named(nodes, NodeState.SILENT),
        cluster_size=size,
        data_nodes=data_nodes,
        arbitrators=arbitrators,
        members_seen=members_seen,
        inconsistencies=inconsistencies,
        tolerance=tolerance,
        cluster_weight=cluster_weight,
        weights=tuple(members),
        weight_note=note,
    )


def _primary_components(
    nodes: Sequence[NodeView], results: Sequence[NodeResult]
) -> dict[tuple[str | None, str | None], list[NodeView]]:
    """The Primary nodes by the component they report (state uuid, configuration id), those
    whose reading is outdated left out."""
    readings = [
        (node, result.read_at)
        for node, result in zip(nodes, results, strict=True)
        if node.state is NodeState.PRIMARY
    ]
    outdated = _outdated(readings)
    primaries = [node for i, (node, _) in enumerate(readings) if i not in outdated]
    components: dict[tuple[str | None, str | None], list[NodeView]] = {}
    for node in primaries:
        assert node.status is not None
        key = (node.status.cluster_state_uuid, node.status.cluster_conf_id)
        components.setdefault(key, []).append(node)
    return components


def _size_and_addresses(component: Sequence[NodeView]) -> tuple[int | None, tuple[str, ...]]:
    """The largest cluster size a node of ``component`` reports, and the longest list of
    incoming addresses."""
    size: int | None = None
    addresses: tuple[str, ...] = ()
    for node in component:
        assert node.status is not None
        if node.status.cluster_size is not None:
            size = max(size or 0, node.status.cluster_size)
        if node.status.incoming_addresses and len(node.status.incoming_addresses) > len(addresses):
            addresses = node.status.incoming_addresses
    return size, addresses


def _weighted_members(
    component: Sequence[NodeView], unpolled: int, arbitrators: int, cluster_weight: int | None
) -> tuple[list[Member], str | None]:
    """The component's members with their weights (the nodes not polled and the arbitrators
    sharing what ``wsrep_cluster_weight`` leaves), and a note when that is a guess or unused."""
    members = [Member(node.name, node.weight) for node in component]
    members += [Member(f"unpolled{i}") for i in range(unpolled)]
    members += [Member(f"garbd{i}", arbitrator=True) for i in range(arbitrators)]
    unknown = [node.name for node in component if not node.weight_known]
    unknown += [m.name for m in members if m.name.startswith(("unpolled", "garbd"))]
    weighted = with_total_weight(members, unknown, cluster_weight)
    note = None
    if weighted.worst_case:
        note = (
            f"{_unread(unknown)} hold {weighted.unknown_weight} of the weight "
            f"{cluster_weight} together (wsrep_cluster_weight), not 1 each: the headroom "
            "assumes one of them holds it all"
        )
    elif weighted.inconsistent:
        note = (
            f"wsrep_cluster_weight {cluster_weight} is less than the pc.weight the nodes "
            "report: not used"
        )
    return list(weighted.members), note


def _unread(names: Sequence[str]) -> str:
    """The members whose weight Vigil cannot read, in words: "garbd, 1 node Vigil does not
    poll, node2 (provider options unread)"."""
    arbitrators = sum(1 for name in names if name.startswith("garbd"))
    unpolled = sum(1 for name in names if name.startswith("unpolled"))
    named = [name for name in names if not name.startswith(("garbd", "unpolled"))]
    parts = []
    if arbitrators:
        parts.append("garbd" if arbitrators == 1 else f"{arbitrators} garbd")
    if unpolled:
        parts.append(f"{unpolled} node" + ("" if unpolled == 1 else "s") + " Vigil does not poll")
    if named:
        parts.append(", ".join(named) + " (provider options unread)")
    return ", ".join(parts)


def _inconsistencies(
    components: dict[tuple[str | None, str | None], list[NodeView]],
) -> tuple[str, ...]:
    if len(components) < 2:
        return ()
    found = []
    uuids = {uuid for uuid, _ in components}
    if len(uuids) > 1:
        found.append("Primary nodes disagree on cluster_state_uuid")
    conf_ids = {conf_id for _, conf_id in components}
    if len(conf_ids) > 1:
        found.append("Primary nodes disagree on cluster_conf_id")
    groups = " vs ".join(
        "+".join(node.name for node in members) + f" (conf_id {conf_id})"
        for (_, conf_id), members in components.items()
    )
    found.append(f"{len(components)} Primary components: {groups}")
    return tuple(found)


def _figures(
    view: ClusterView, expected_data_nodes: int | None, expected_arbitrators: int | None
) -> dict[str, Any]:
    tolerance = view.tolerance
    return {
        "cluster_size": view.cluster_size,
        "data_nodes": view.data_nodes,
        "arbitrators": view.arbitrators,
        "expected_data_nodes": expected_data_nodes,
        "expected_arbitrators": expected_arbitrators,
        "one_by_one": tolerance.one_by_one if tolerance else None,
        "simultaneous": tolerance.simultaneous if tolerance else None,
        "headroom": describe(tolerance) if tolerance else None,
        "primary": list(view.primary),
        "non_primary": list(view.non_primary),
        "unreachable": list(view.unreachable),
        "not_galera": list(view.not_galera),
        "disconnected": list(view.disconnected),
        "silent": list(view.silent),
        "members_seen": list(view.members_seen),
        "split_brain": view.split_brain,
        "cluster_weight": view.cluster_weight,
        "weight_note": view.weight_note,
        "nodes": {
            node.name: {"state": str(node.state), "detail": node.detail} for node in view.nodes
        },
    }


def cluster_verdict(
    view: ClusterView,
    *,
    expected_data_nodes: int | None = None,
    expected_arbitrators: int | None = None,
    thresholds: Thresholds | None = None,
    split_brain_before: bool = True,
    recv_queue_history: Mapping[str, Sequence[float | None]] | None = None,
    send_queue_history: Mapping[str, Sequence[float | None]] | None = None,
    flow_control: Mapping[str, Paused | None] | None = None,
    cert_failure_rates: Mapping[str, float | None] | None = None,
    node_notes: Mapping[str, Sequence[str]] | None = None,
) -> Verdict:
    """Critical, warning or ok, with every reason at the worst level found.

    Nodes disagree on conf_id for a second or two after a failure, so a collector passes
    ``split_brain_before`` (did the previous poll see inconsistent views too?): a split-brain
    is reported only when seen twice in a row. From the collector's earlier readings:
    ``recv_queue_history``/``send_queue_history`` give each node's earlier queue lengths
    (oldest first), ``flow_control`` each node's pause since its previous reading, and
    ``cert_failure_rates`` its certification failures per minute (``rates``), and
    ``node_notes`` what other concerns know of the nodes (``concerns.notes``: an EBS volume out
    of burst credits), told with a flow-control warning, the slow node's first.
    """
    thresholds = thresholds or Thresholds()
    figures = _figures(view, expected_data_nodes, expected_arbitrators)
    figures["split_brain_confirmed"] = view.split_brain and split_brain_before
    critical: list[str] = []
    warning: list[str] = []
    answered = (NodeState.PRIMARY, NodeState.NON_PRIMARY, NodeState.DISCONNECTED)
    galera_nodes = [n for n in view.nodes if n.state in answered]
    rates = {name: rate for name, rate in (cert_failure_rates or {}).items() if rate is not None}
    figures["cert_failures_per_minute"] = round(sum(rates.values()), 3) if rates else None
    if view.nodes and len(view.silent) == len(view.nodes):
        reason = "no report from any node: " + "; ".join(
            f"{n.name}: {n.detail}" for n in view.nodes
        )
        return Verdict(Status.UNKNOWN, reason, figures)
    _membership(view, galera_nodes, split_brain_before, critical, warning)
    found = judge(
        _primaries(view),
        thresholds,
        names=_names(view),
        flow_control=flow_control,
        recv_queue_history=recv_queue_history,
        send_queue_history=send_queue_history,
        notes=node_notes,
    )
    critical += found.critical
    warning += found.warning
    figures.update(found.figures)
    warning += _cluster_warnings(
        view, figures, rates, thresholds, expected_data_nodes, expected_arbitrators
    )
    if critical:
        return Verdict(Status.CRITICAL, "; ".join(critical), figures)
    if warning:
        return Verdict(Status.WARNING, "; ".join(warning), figures)
    return Verdict(Status.OK, _summary(view), figures)


def _membership(
    view: ClusterView,
    galera_nodes: list[NodeView],
    split_brain_before: bool,
    critical: list[str],
    warning: list[str],
) -> None:
    """Who is in the group and in what state: no node, split-brain, quorum, each node's
    state (a rejoining node not ready yet is a warning) and its sync state."""
    if not galera_nodes:
        if view.not_galera:
            critical.append(
                "no Galera node answered: "
                + ", ".join(f"{name} is {NOT_GALERA}" for name in view.not_galera)
            )
        elif view.unreachable:
            critical.append(
                "no node reachable: " + "; ".join(f"{n.name}: {n.detail}" for n in view.nodes)
            )
        else:
            critical.append("no node reachable")
    if view.split_brain and split_brain_before:
        critical.append("possible split-brain: " + "; ".join(view.inconsistencies))
    if galera_nodes and not view.primary:
        critical.append("quorum lost: no node is in a Primary component")
    for node in view.nodes:
        _node_state(node, bool(galera_nodes), critical, warning)


def _node_state(node: NodeView, any_galera: bool, critical: list[str], warning: list[str]) -> None:
    """One node's state and sync state, as a reason at its level."""
    status = node.status
    if node.state is NodeState.DISCONNECTED:
        critical.append(f"{node.name} is cut from the group ({node.detail})")
    elif node.state is NodeState.SILENT:
        warning.append(f"{node.name} unknown: {node.detail}")
    elif node.state is NodeState.NON_PRIMARY:
        critical.append(f"{node.name} is {node.detail}, not Primary")
    elif node.state is NodeState.PRIMARY and status is not None and not status.is_ready:
        not_ready = f"{node.name} is not ready (wsrep_ready {status.ready or 'missing'})"
        comment = (status.local_state_comment or "").lower()
        # A node rejoining after a restart is not ready until it has caught up.
        (warning if comment.startswith("join") else critical).append(not_ready)
    elif node.state is NodeState.UNREACHABLE:
        warning.append(f"{node.name} unreachable: {node.detail}")
    elif node.state is NodeState.NOT_GALERA and any_galera:
        warning.append(f"{node.name} is {NOT_GALERA}")
    if node.state is not NodeState.PRIMARY or status is None:
        return
    comment = (status.local_state_comment or "").strip()
    if comment.lower() in DESYNCED_STATES:
        why = "a backup or state transfer is running"
        if status.desync_count:
            why += f"; wsrep_desync_count {status.desync_count}"
        warning.append(f"{node.name} is {comment} ({why})")
    elif comment and comment.lower() != "synced":
        warning.append(f"{node.name} is {comment}")


def _primaries(view: ClusterView) -> list[Reading]:
    """The readings of the nodes in a Primary component that answered."""
    return [
        Reading(n.name, n.status, n.auto_evict)
        for n in view.nodes
        if n.state is NodeState.PRIMARY and n.status is not None
    ]


def _names(view: ClusterView) -> dict[str, str]:
    """Node names by gcomm UUID (a node's evict list names the others by UUID)."""
    return {
        n.status.gcomm_uuid: n.name
        for n in view.nodes
        if n.status is not None and n.status.gcomm_uuid
    }


def _cluster_warnings(
    view: ClusterView,
    figures: dict,
    rates: dict[str, float],
    thresholds: Thresholds,
    expected_data_nodes: int | None,
    expected_arbitrators: int | None,
) -> list[str]:
    """The cluster's warnings as a whole: certification failures, no failure tolerated,
    fewer data nodes or arbitrators than expected."""
    warning: list[str] = []
    total = figures["cert_failures_per_minute"]
    if total is not None and total >= thresholds.cert_failures_per_minute:
        per_node = ", ".join(f"{name} {rate:.1f}" for name, rate in rates.items() if rate)
        limit = f"{thresholds.cert_failures_per_minute:g}"
        warning.append(
            f"{total:.1f} certification failures a minute ({per_node})"
            + over(thresholds, "cert_failures_per_minute", limit)
        )
    if view.tolerance is not None and view.tolerance.one_by_one == 0:
        warning.append(
            "one more failure stops the cluster"
            + (f" ({view.weight_note})" if view.weight_note else "")
        )
    if view.primary:
        if expected_data_nodes is not None and view.data_nodes < expected_data_nodes:
            warning.append(
                f"{view.data_nodes} of {expected_data_nodes} data nodes in the Primary component"
            )
        arbitrators = view.arbitrators or 0
        if expected_arbitrators is not None and arbitrators < expected_arbitrators:
            warning.append(f"{arbitrators} of {expected_arbitrators} arbitrators in the cluster")
    return warning


def _summary(view: ClusterView) -> str:
    nodes = f"{view.data_nodes} data node" + ("" if view.data_nodes == 1 else "s")
    if view.arbitrators:
        nodes += f" + {view.arbitrators} arbitrator" + ("" if view.arbitrators == 1 else "s")
    headroom = describe(view.tolerance) if view.tolerance else ""
    note = f" ({view.weight_note})" if view.weight_note else ""
    return f"Primary, {nodes} Synced; {headroom}{note}"

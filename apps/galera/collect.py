"""One Galera cluster's poll, between the adapters and the database: read every node (a live
poll over ``mysql.py``, the last push, or a demo's recorded sample), judge the view
(``verdict.build_view``, ``verdict.cluster_verdict``), save a snapshot and record the status.

The Celery tasks (``tasks.py``) call these; ``save_poll`` is safe to run twice (a snapshot more,
and a transition only when the status changes: ``alerts.record``).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps import alerts
from apps.lib.status import Status, Verdict
from apps.regions import concerns
from apps.regions import thresholds as region_thresholds

from . import mysql, recorded
from .advice import cluster_advice
from .models import POLL_LEASE, Cluster, Node, PasswordUnavailable, Snapshot
from .parse_push import pushed_result
from .rates import (
    CERT_FAILURES,
    FLOW_CONTROL_PAUSED,
    FLOW_CONTROL_SENT,
    LAST_COMMITTED,
    cert_failures,
    count,
    interval_since,
    repl_latency_s,
    since_previous,
)
from .replication import Paused, Thresholds
from .verdict import ClusterView, NodeResult, NodeView, build_view, cluster_verdict, storable

CONNECT_TIMEOUT_S = 3.0
READ_TIMEOUT_S = 3.0

log = logging.getLogger(__name__)


def thresholds() -> Thresholds:
    return Thresholds(
        flow_control_paused=settings.VIGIL_GALERA_FLOW_CONTROL_PAUSED,
        recv_queue=settings.VIGIL_GALERA_RECV_QUEUE,
        send_queue=settings.VIGIL_GALERA_SEND_QUEUE,
        cert_failures_per_minute=settings.VIGIL_GALERA_CERT_FAILURES_PER_MINUTE,
    )


def stale_clusters(now: datetime) -> list[Cluster]:
    """Enabled clusters with a status whose last poll is older than three intervals."""
    candidates = (
        Cluster.objects.filter(enabled=True, polled_at__isnull=False)
        .exclude(status=Status.UNKNOWN.value)
        .exclude(lease_until__gt=now)
    )
    return [
        c
        for c in candidates
        if now - c.polled_at > timedelta(seconds=3 * c.interval_s) + 2 * POLL_LEASE
    ]


def stopped_words(grastate: dict[str, Any]) -> str:
    """A stopped node's report in words, as its error."""
    words = f"mysqld is not running; grastate.dat seqno {grastate.get('seqno')}"
    if grastate.get("safe_to_bootstrap"):
        words += ", safe_to_bootstrap: 1"
    if grastate.get("recovered_seqno") is not None:
        words += f"; recovered position {grastate['recovered_seqno']} ({grastate['recovered_by']})"
    return words


def push_result(node: Node, now: datetime) -> NodeResult:
    """A pushing node's last report, or silence when it is missing or too old."""
    stale_after = timedelta(minutes=settings.VIGIL_GALERA_PUSH_STALE_MINUTES)
    if node.reported_at is None:
        return NodeResult(node.label, error="no report received yet", silent=True)
    if now - node.reported_at > stale_after:
        when = f"{node.reported_at:%Y-%m-%d %H:%M} UTC"
        return NodeResult(node.label, error=f"no report since {when}", silent=True)
    if node.grastate:
        return NodeResult(
            node.label, error=stopped_words(node.grastate), read_at=node.reported_at.timestamp()
        )
    return pushed_result(
        node.label, node.report_status, node.report_options, node.reported_at.timestamp()
    )


def read_nodes(cluster: Cluster, now: datetime | None = None) -> list[NodeResult]:
    """One result per node, in order: a recorded sample (demo), the last push, or a live poll
    (pushing nodes are never connected to)."""
    now = now or timezone.now()
    nodes = list(cluster.nodes.all())
    results: dict[int, NodeResult] = {}
    addresses: dict[int, mysql.NodeAddress] = {}
    for node in nodes:
        if cluster.is_demo or node.recorded_sample:
            results[node.pk] = recorded.sample_result(node)
            continue
        if node.mode == Node.Mode.PUSH:
            results[node.pk] = push_result(node, now)
            continue
        try:
            password = node.password()
        except PasswordUnavailable as error:  # the reference in the log, never in the detail
            log.warning("Node %s: password unavailable: %s", node.pk, error.reference)
            results[node.pk] = NodeResult(node.label, error=f"password unavailable: {error}")
            continue
        addresses[node.pk] = mysql.NodeAddress(
            node.host, node.port, node.label, node.user, password, node.ssl()
        )
    polled = mysql.poll_nodes(
        addresses.values(), connect_timeout=CONNECT_TIMEOUT_S, read_timeout=READ_TIMEOUT_S
    )
    read_at = now.timestamp()
    results.update(
        (pk, replace(result, read_at=read_at)) for pk, result in zip(addresses, polled, strict=True)
    )
    return [results[node.pk] for node in nodes]


def node_facts(node: NodeView, read_at: datetime) -> dict[str, Any]:
    """What a snapshot keeps of one node (JSON); ``read_at``: when its status was read. The
    rates between readings (``between``) are added by ``save_poll``."""
    status = node.status
    facts: dict[str, Any] = {"state": str(node.state), "detail": storable(node.detail)}
    if status is None:
        return facts
    facts.update(
        local_state_comment=status.local_state_comment,
        last_committed=status.last_committed,
        local_cached_downto=count(status.variables, "wsrep_local_cached_downto"),
        repl_latency_s=repl_latency_s(status.variables),
        cluster_size=status.cluster_size,
        cluster_status=status.cluster_status,
        cluster_conf_id=status.cluster_conf_id,
        ready=status.ready,
        recv_queue=status.local_recv_queue,
        recv_queue_avg=status.local_recv_queue_avg,
        send_queue=status.local_send_queue,
        send_queue_avg=status.local_send_queue_avg,
        flow_control_paused_ns=status.flow_control_paused_ns,
        flow_control_paused=status.flow_control_paused,
        flow_control_requested=(
            status.requests_flow_control if status.flow_control_requested is not None else None
        ),
        flow_control_sent=status.flow_control_sent,
        flow_control_recv=status.flow_control_recv,
        connected=status.connected,
        cert_failures=cert_failures(status.variables),
        incoming_addresses=list(status.incoming_addresses or ()),  # the members it sees
        read_at=read_at.timestamp(),
        weight=node.weight,
        cluster_weight=status.cluster_weight,
        desync_count=status.desync_count,
        local_state_uuid=status.local_state_uuid,
        cluster_state_uuid=status.cluster_state_uuid,
        gcomm_uuid=status.gcomm_uuid,
        evs_delayed=[
            {"uuid": d.uuid, "address": storable(d.address), "count": d.count}
            for d in status.evs_delayed or ()
        ],
        evs_evict_list=list(status.evs_evict_list or ()),
    )
    return facts


def between(
    node: NodeView, read_at: float, before: dict[str, Any] | None, before_at: float | None
) -> dict[str, Any]:
    """A node's rates since its facts in the previous snapshot (``rates``): certification
    failures and flow-control pauses asked for a minute, the share of the interval paused."""
    status = node.status
    if status is None:
        return {}
    args = (read_at, before, before_at)
    sent = since_previous(status.flow_control_sent, *args, counter=FLOW_CONTROL_SENT)
    return {
        "interval_s": interval_since(*args),
        CERT_FAILURES.rate_key: since_previous(
            cert_failures(status.variables), *args, counter=CERT_FAILURES
        ),
        FLOW_CONTROL_PAUSED.rate_key: since_previous(
            status.flow_control_paused_ns, *args, counter=FLOW_CONTROL_PAUSED
        ),
        FLOW_CONTROL_SENT.rate_key: sent,
        LAST_COMMITTED.rate_key: since_previous(
            status.last_committed, *args, counter=LAST_COMMITTED
        ),
    }


def paused(facts: dict[str, Any]) -> Paused | None:
    """A node's flow control since its previous reading, from its facts (``between``)."""
    share, seconds = facts.get(FLOW_CONTROL_PAUSED.rate_key), facts.get("interval_s")
    if share is None or not seconds:
        return None
    return Paused(share, seconds, sent=bool(facts.get(FLOW_CONTROL_SENT.rate_key)))


def _most(values: list[Any]) -> Any:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def save_poll(cluster: Cluster, results: list[NodeResult], now: datetime | None = None) -> Verdict:
    """Judge the results against the cluster's expectations and history; save and record."""
    now = now or timezone.now()
    view = build_view(results)
    limits = region_thresholds.for_subject(cluster, thresholds())
    keep = max(limits.recv_queue_growth_polls - 1, 1)
    previous = list(cluster.snapshots.order_by("-created", "-pk")[:keep])[::-1]
    recv_history, send_history = (
        {
            node.name: [snap.nodes.get(node.name, {}).get(key) for snap in previous]
            for node in view.nodes
        }
        for key in ("recv_queue", "send_queue")
    )
    pushed = {n.label: n.reported_at for n in cluster.nodes.all() if n.mode == Node.Mode.PUSH}
    read_at = {node.name: pushed.get(node.name) or now for node in view.nodes}
    facts = _facts(view, read_at, previous[-1] if previous else None)
    rates = {name: seen.get(CERT_FAILURES.rate_key) for name, seen in facts.items()}
    if not results:
        verdict = Verdict(Status.UNKNOWN, "no nodes configured")
    else:
        verdict = cluster_verdict(
            view,
            expected_data_nodes=cluster.expected_data_nodes,
            expected_arbitrators=cluster.expected_arbitrators,
            thresholds=limits,
            split_brain_before=bool(previous) and previous[-1].split_brain,
            recv_queue_history=recv_history,
            send_queue_history=send_history,
            flow_control={name: paused(seen) for name, seen in facts.items()},
            cert_failure_rates=rates,
            node_notes=concerns.notes(cluster),
        )
    summary = _summary(view, facts, verdict)
    timeouts = [r.options.evs_suspect_timeout for r in results if r.options is not None]
    _store(cluster, now, verdict, view, facts, summary, [t for t in timeouts if t is not None])
    if results and not view.primary:
        verdict = with_recovery(cluster, verdict)
    alerts.record(cluster, verdict)
    return verdict


def _facts(view: ClusterView, read_at: dict[str, datetime], last: Snapshot | None) -> dict:
    """Each node's facts as a snapshot keeps them, with its rates since the ``last``."""
    facts = {}
    for node in view.nodes:
        facts[node.name] = node_facts(node, read_at[node.name])
        facts[node.name].update(
            between(
                node,
                read_at[node.name].timestamp(),
                last.nodes.get(node.name) if last else None,
                last.created.timestamp() if last else None,
            )
        )
    return facts


def _summary(view: ClusterView, facts: dict, verdict: Verdict) -> dict:
    """The cluster's figures that its snapshot and its row both keep."""
    tolerance = view.tolerance
    statuses = [n.status for n in view.nodes if n.status is not None]
    return {
        "cluster_size": view.cluster_size,
        "primary": bool(view.primary) if view.reachable else None,
        "data_nodes": view.data_nodes if view.primary else None,
        "arbitrators": view.arbitrators,
        "one_by_one": tolerance.one_by_one if tolerance else None,
        "simultaneous": tolerance.simultaneous if tolerance else None,
        "flow_control_paused": _most([s.flow_control_paused for s in statuses]),
        "flow_control_paused_share": _most(
            [seen.get(FLOW_CONTROL_PAUSED.rate_key) for seen in facts.values()]
        ),
        "recv_queue": _most([s.local_recv_queue for s in statuses]),
        "send_queue": _most([s.local_send_queue for s in statuses]),
        "cluster_weight": view.cluster_weight,
        "cert_failures_per_minute": (verdict.figures or {}).get("cert_failures_per_minute"),
    }


def _store(
    cluster: Cluster,
    now: datetime,
    verdict: Verdict,
    view: ClusterView,
    facts: dict,
    summary: dict,
    timeouts: list[float],
) -> None:
    """Save the poll in one transaction: its snapshot, the cluster's row (``timeouts``: the
    nodes' ``evs.suspect_timeout``) and each node's state."""
    with transaction.atomic():
        Snapshot.objects.create(
            cluster=cluster,
            created=now,
            status=verdict.status.value,
            reason=verdict.reason,
            split_brain=view.split_brain,
            nodes=facts,
            **summary,
        )
        Cluster.objects.filter(pk=cluster.pk).update(
            polled_at=now, suspect_timeout_s=max(timeouts) if timeouts else None, **summary
        )
        seen = {n.name: n for n in view.nodes}
        for node in cluster.nodes.all():
            if node.label in seen:
                state, detail = str(seen[node.label].state), storable(seen[node.label].detail)
                Node.objects.filter(pk=node.pk).update(state=state, detail=detail)


def with_recovery(cluster: Cluster, verdict: Verdict) -> Verdict:
    """The verdict with the recovery advice among its figures, so that the quorum-loss email
    says what to do (``advice``: from the snapshot just saved and the stopped nodes' reports)."""
    advice, _ = cluster_advice(cluster)
    steps = [f"{step.node}: {step.command}" for step in advice.steps]
    extra = {"recovery": advice.summary, "recovery_steps": steps}
    if advice.loses:
        extra["recovery_loses"] = advice.loses
    if advice.warnings:
        extra["recovery_warnings"] = list(advice.warnings)
    return replace(verdict, figures={**verdict.figures, **extra})

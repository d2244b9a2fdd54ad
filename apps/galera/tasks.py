"""Celery glue: poll a cluster's nodes, judge the view, save a snapshot, record the status.

``poll_cluster`` is adapter (``mysql.poll_nodes``, or the recorded sample of a demo node) ->
pure (``build_view``, ``cluster_verdict``) -> save -> ``alerts.record``, under a lease so a
cluster is never polled twice at once; it is safe to run twice. ``dispatch_due(now)`` is
what the beat tick calls every minute.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from celery import shared_task
from django.db import transaction
from django.utils import timezone

from apps import alerts
from apps.lib import leases
from apps.lib.status import Status, Verdict

from . import demo, mysql
from .models import POLL_LEASE, Cluster, Node, PasswordUnavailable, Snapshot
from .view import NodeResult, NodeView, Thresholds, build_view, cluster_verdict

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 3.0
READ_TIMEOUT_S = 3.0
SNAPSHOT_RETENTION = timedelta(days=30)
THRESHOLDS = Thresholds()


def dispatch_due(now: datetime) -> int:
    """Mark clusters whose polls stopped unknown, queue the due ones; how many were due."""
    for cluster in stale_clusters(now):
        when = f"{cluster.polled_at:%Y-%m-%d %H:%M} UTC" if cluster.polled_at else "ever"
        alerts.record(cluster, Verdict(Status.UNKNOWN, f"not polled since {when}"))
    Snapshot.objects.filter(created__lt=now - SNAPSHOT_RETENTION).delete()
    claimed = Cluster.claim_due(now)
    regions = dict(Cluster.objects.filter(pk__in=claimed).values_list("pk", "region__code"))
    for pk in claimed:
        poll_cluster.delay(pk, region=regions.get(pk))
    return len(claimed)


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


@shared_task(time_limit=int(POLL_LEASE.total_seconds()), soft_time_limit=50)
def poll_cluster(cluster_id: int, region: str | None = None) -> str | None:
    """Poll every node of the cluster at once and record what it says; the new status."""
    with leases.lease(Cluster, cluster_id, POLL_LEASE) as held:
        if not held:
            log.info("Galera cluster %s is already being polled", cluster_id)
            return None
        cluster = Cluster.objects.filter(pk=cluster_id).first()
        if cluster is None:
            return None
        verdict = save_poll(cluster, read_nodes(cluster))
        log.info("Polled %s: %s (%s)", cluster, verdict.status, verdict.reason)
        return verdict.status.value


def read_nodes(cluster: Cluster) -> list[NodeResult]:
    """One result per node, in order: a recorded sample (demo), or a live poll."""
    nodes = list(cluster.nodes.all())
    results: dict[int, NodeResult] = {}
    addresses: dict[int, mysql.NodeAddress] = {}
    for node in nodes:
        if cluster.is_demo or node.recorded_sample:
            results[node.pk] = demo.sample_result(node)
            continue
        try:
            password = node.password()
        except PasswordUnavailable as error:
            results[node.pk] = NodeResult(node.label, error=f"password unavailable: {error}")
            continue
        addresses[node.pk] = mysql.NodeAddress(
            node.host, node.port, node.label, node.user, password, node.ssl()
        )
    polled = mysql.poll_nodes(
        addresses.values(), connect_timeout=CONNECT_TIMEOUT_S, read_timeout=READ_TIMEOUT_S
    )
    results.update(zip(addresses, polled, strict=True))
    return [results[node.pk] for node in nodes]


def node_facts(node: NodeView, result: NodeResult) -> dict[str, Any]:
    """What a snapshot keeps of one node (JSON)."""
    status = node.status
    facts: dict[str, Any] = {"state": str(node.state), "detail": node.detail}
    if status is None:
        return facts
    cert_failures = status.variables.get("wsrep_local_cert_failures")
    facts.update(
        local_state_comment=status.local_state_comment,
        cluster_status=status.cluster_status,
        cluster_conf_id=status.cluster_conf_id,
        ready=status.ready,
        recv_queue_avg=status.local_recv_queue_avg,
        send_queue_avg=status.local_send_queue_avg,
        flow_control_paused=status.flow_control_paused,
        flow_control_sent=status.flow_control_sent,
        flow_control_recv=status.flow_control_recv,
        cert_failures=int(cert_failures) if (cert_failures or "").isdigit() else None,
        weight=node.weight,
    )
    return facts


def save_poll(cluster: Cluster, results: list[NodeResult], now: datetime | None = None) -> Verdict:
    """Judge the results against the cluster's expectations and history; save and record."""
    now = now or timezone.now()
    view = build_view(results)
    keep = max(THRESHOLDS.recv_queue_growth_polls - 1, 1)
    previous = list(cluster.snapshots.order_by("-created", "-pk")[:keep])[::-1]
    history = {
        node.name: [snap.nodes.get(node.name, {}).get("recv_queue_avg") for snap in previous]
        for node in view.nodes
    }
    if not results:
        verdict = Verdict(Status.UNKNOWN, "no nodes configured")
    else:
        verdict = cluster_verdict(
            view,
            expected_data_nodes=cluster.expected_data_nodes,
            expected_arbitrators=cluster.expected_arbitrators,
            thresholds=THRESHOLDS,
            split_brain_before=bool(previous) and previous[-1].split_brain,
            recv_queue_history=history,
        )
    tolerance = view.tolerance
    paused = [n.status.flow_control_paused for n in view.nodes if n.status is not None]
    paused = [p for p in paused if p is not None]
    timeouts = [r.options.evs_suspect_timeout for r in results if r.options is not None]
    timeouts = [t for t in timeouts if t is not None]
    summary = {
        "cluster_size": view.cluster_size,
        "primary": bool(view.primary) if view.reachable else None,
        "data_nodes": view.data_nodes if view.primary else None,
        "arbitrators": view.arbitrators,
        "one_by_one": tolerance.one_by_one if tolerance else None,
        "simultaneous": tolerance.simultaneous if tolerance else None,
        "flow_control_paused": max(paused) if paused else None,
    }
    with transaction.atomic():
        Snapshot.objects.create(
            cluster=cluster,
            created=now,
            status=verdict.status.value,
            reason=verdict.reason,
            split_brain=view.split_brain,
            nodes={n.name: node_facts(n, r) for n, r in zip(view.nodes, results, strict=True)},
            **summary,
        )
        Cluster.objects.filter(pk=cluster.pk).update(
            polled_at=now, suspect_timeout_s=max(timeouts) if timeouts else None, **summary
        )
        seen = {n.name: n for n in view.nodes}
        for node in cluster.nodes.all():
            if node.label in seen:
                state, detail = str(seen[node.label].state), seen[node.label].detail
                Node.objects.filter(pk=node.pk).update(state=state, detail=detail)
    alerts.record(cluster, verdict)
    return verdict

"""The recovery advice for one cluster: each node's last known position (the last poll's
snapshot for a running node, a stopped node's pushed grastate.dat) through ``recovery.advise``.

DB-aware glue: reads, never writes, and never runs anything on a node.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from .models import Cluster, Node, Snapshot
from .recovery import Advice, Position, advise

RUNNING_STATES = {"primary", "non-primary", "disconnected"}


def _running(label: str, facts: dict[str, Any]) -> Position:
    members = facts.get("incoming_addresses") or []
    return Position(
        label,
        running=True,
        primary=facts.get("state") == "primary",
        last_committed=facts.get("last_committed"),
        component=",".join(sorted(members)) or None,
        component_weight=facts.get("cluster_size"),
        uuid=facts.get("local_state_uuid"),
    )


def _stopped(label: str, grastate: dict[str, Any]) -> Position:
    return Position(
        label,
        running=False,
        uuid=grastate.get("recovered_uuid") or grastate.get("uuid"),
        seqno=grastate.get("seqno"),
        safe_to_bootstrap=grastate.get("safe_to_bootstrap"),
        recovered_seqno=grastate.get("recovered_seqno"),
        recovered_by=grastate.get("recovered_by") or "",
    )


def position(node: Node, snapshot: Snapshot | None, now: datetime) -> Position:
    """What Vigil knows of ``node``: a fresh stopped report, else its facts in ``snapshot``."""
    stale = timedelta(minutes=settings.VIGIL_GALERA_PUSH_STALE_MINUTES)
    fresh = node.reported_at is not None and now - node.reported_at <= stale
    if node.mode == Node.Mode.PUSH and node.grastate and fresh:
        return _stopped(node.label, node.grastate)
    facts = (snapshot.nodes if snapshot else {}).get(node.label) or {}
    if facts.get("state") in RUNNING_STATES:
        return _running(node.label, facts)
    return Position(node.label)


def last_cluster_uuid(cluster: Cluster) -> str | None:
    """The state uuid of the last Primary component Vigil saw."""
    snapshot = cluster.snapshots.filter(primary=True).first()
    if snapshot is None:
        return None
    uuids = [
        f.get("cluster_state_uuid") for f in snapshot.nodes.values() if f.get("state") == "primary"
    ]
    return next((u for u in uuids if u), None)


def cluster_advice(cluster: Cluster, now: datetime | None = None) -> tuple[Advice, dict]:
    """The advice, and what it stands on (the snapshot's time, each node's position)."""
    now = now or timezone.now()
    snapshot = cluster.snapshots.first()
    nodes = list(cluster.nodes.all())
    positions = [position(node, snapshot, now) for node in nodes]
    advice = advise(positions, last_cluster_uuid(cluster))
    basis = {
        "polled_at": snapshot.created if snapshot else None,
        "nodes": [
            {
                "node": p.name,
                "running": p.running,
                "position": p.position,
                "source": p.source if p.position is not None else None,
                "safe_to_bootstrap": p.safe_to_bootstrap,
                "uuid": p.uuid,
                "mode": node.mode,
            }
            for p, node in zip(positions, nodes, strict=True)
        ],
    }
    return advice, basis

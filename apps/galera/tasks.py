"""Celery glue for Galera: the beat tick's dispatcher and the poll of one cluster.

``poll_cluster`` runs ``collect.read_nodes`` (adapter) and ``collect.save_poll`` (judge, save,
``alerts.record``) under a lease so a cluster is never polled twice at once; it is safe to run
twice. ``dispatch_due(now)`` is what the beat tick calls every minute.
"""

from __future__ import annotations

import logging
from datetime import datetime

from celery import shared_task
from django.utils import timezone

from apps import alerts
from apps.lib import leases
from apps.lib.status import Status, Verdict

from .collect import read_nodes, save_poll, stale_clusters
from .models import POLL_LEASE, Cluster

log = logging.getLogger(__name__)


def dispatch_due(now: datetime) -> int:
    """Mark clusters whose polls stopped unknown, queue the due ones; how many were due."""
    for cluster in stale_clusters(now):
        when = f"{cluster.polled_at:%Y-%m-%d %H:%M} UTC" if cluster.polled_at else "ever"
        alerts.record(cluster, Verdict(Status.UNKNOWN, f"not polled since {when}"))
    claimed = Cluster.claim_due(now)
    regions = dict(Cluster.objects.filter(pk__in=claimed).values_list("pk", "region__code"))
    for pk in claimed:
        poll_cluster.delay(pk, region=regions.get(pk))
    return len(claimed)


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
        now = timezone.now()
        verdict = save_poll(cluster, read_nodes(cluster, now), now)
        log.info("Polled %s: %s (%s)", cluster, verdict.status, verdict.reason)
        return verdict.status.value

"""Celery glue for probes: claim due targets, then probe each batch (``collect.probe_batch``).

A probe can wait up to its cap (20 minutes by default) for the server to close, so a worker
process is never given one probe: ``dispatch_due`` claims the due targets by compare-and-set
and queues them in batches of ``VIGIL_PROBES_CONCURRENCY``; ``run_probes`` runs a whole batch
at once in one event loop and saves each result (and the status it leads to) as soon as that
probe finishes, while the others are still waiting.
"""

from __future__ import annotations

from datetime import datetime

from celery import shared_task
from django.conf import settings

from apps import alerts
from apps.lib.status import Status, Verdict

from .collect import probe_batch
from .models import LEASE_MARGIN_S, MAX_CAP_S, MAX_TIMEOUT_S, Target

# Every probe of a batch runs at once, so the batch lasts as long as its longest probe.
TIME_LIMIT_S = int(MAX_CAP_S + 2 * MAX_TIMEOUT_S + LEASE_MARGIN_S)


def dispatch_due(now: datetime) -> int:
    """Queue the due targets in batches a task runs at once; how many were due.

    Targets of a region listed in ``VIGIL_REGION_QUEUES`` go in batches of their own to that
    region's queue (``probes.eu-west-1``), so a worker there measures them; the rest share
    batches on the ``probes`` queue.
    """
    for target in Target.stale(now):
        reason = (
            f"no measurement since {target.last_result:%Y-%m-%d %H:%M} UTC"
            if target.last_result
            else "no measurement yet"
        )
        alerts.record(target, Verdict(Status.UNKNOWN, reason))
    claimed = Target.claim_due(now)
    own_queue = set(settings.VIGIL_REGION_QUEUES)
    by_queue: dict[str | None, list[int]] = {}
    rows = Target.objects.filter(pk__in=claimed).values_list("pk", "region__code")
    for pk, region in rows.order_by("pk"):
        by_queue.setdefault(region if region in own_queue else None, []).append(pk)
    size = max(1, settings.VIGIL_PROBES_CONCURRENCY)
    for region, ids in by_queue.items():
        for start in range(0, len(ids), size):
            run_probes.delay(ids[start : start + size], region=region)
    return len(claimed)


# acks_late off: a batch can outlast a broker's visibility timeout, and a lost batch only
# costs one interval (the targets are due again), while a redelivered one would be skipped.
@shared_task(time_limit=TIME_LIMIT_S, soft_time_limit=TIME_LIMIT_S - 30, acks_late=False)
def run_probes(target_ids: list[int], region: str | None = None) -> int:
    """Probe the targets concurrently; save each result as it finishes. How many ran."""
    return probe_batch(target_ids)

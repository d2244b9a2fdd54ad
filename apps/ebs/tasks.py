"""Celery glue for EBS: one task per account-region (discover when due, collect, judge).

``dispatch_due`` runs on the beat tick: it makes sure every monitored AWS region has a
``RegionCollection`` row, claims the due ones by compare-and-set and queues
``collect_region`` with ``region=<code>`` so per-region queues can take it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from apps.lib import leases
from apps.regions.models import Region

from . import collect
from .models import RegionCollection


def _lease_ttl() -> timedelta:
    """As long as a task may run (its hard time limit)."""
    return timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)


def dispatch_due(now: datetime) -> int:
    """Queue the collections that are due; how many."""
    regions = Region.objects.shown().filter(kind=Region.Kind.AWS, ebs_collection__isnull=True)
    for region in regions:
        RegionCollection.objects.get_or_create(region=region, defaults={"next_due": now})
    claimed = RegionCollection.claim_due(now)
    rows = RegionCollection.objects.filter(pk__in=claimed, region__in=Region.objects.shown())
    for pk, code in rows.values_list("pk", "region__code"):
        collect_region.delay(pk, region=code)
    return len(claimed)


@shared_task
def collect_region(collection_id: int, region: str | None = None) -> dict | None:
    """Discover (when due), collect and judge one account-region; None if already running."""
    with leases.lease(RegionCollection, collection_id, _lease_ttl()) as held:
        if not held:
            return None
        return collect.run_cycle(collection_id, timezone.now())

"""Celery glue for EFS: one task per account-region (discover when due, collect, judge).

``dispatch_due`` runs on the beat tick: it makes sure every monitored AWS region has a
``RegionCollection`` row, claims the due ones by compare-and-set and queues
``collect_region`` with ``region=<code>`` so per-region queues can take it.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from botocore.exceptions import BotoCoreError, ClientError
from celery import shared_task
from django.conf import settings
from django.utils import timezone

from apps.lib import aws, leases
from apps.regions.models import Region

from . import collect, elasticfilesystem, history, pricing
from .models import FileSystem, RegionCollection

log = logging.getLogger(__name__)


def lease_ttl() -> timedelta:
    """As long as a task may run (its hard time limit): a live collection never loses its
    lease, and one whose worker was killed frees its region as soon as it surely is dead."""
    return timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)


def dispatch_due(now: datetime) -> int:
    """Queue the collections that are due; how many."""
    regions = Region.objects.shown().filter(kind=Region.Kind.AWS, efs_collection__isnull=True)
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
    with leases.lease(RegionCollection, collection_id, lease_ttl()) as held:
        if not held:
            return None
        rc = RegionCollection.objects.select_related("region__account").get(pk=collection_id)
        now = timezone.now()
        outcome = None
        try:
            if rc.next_discovery <= now:
                access = rc.region.account.access
                collect.save_discovery(
                    rc, elasticfilesystem.describe_file_systems(rc.region.code, access), now
                )
                rc.next_discovery = now + timedelta(minutes=settings.VIGIL_EFS_DISCOVERY_MINUTES)
            outcome = collect.collect_metrics(rc, now)
            rc.last_success, rc.last_error, rc.last_error_at = now, "", None
            rc.api_calls = outcome.api_calls
            rc.dropped_values, rc.dropped_note = outcome.dropped_values, outcome.dropped_note()
        except (ClientError, BotoCoreError) as exc:
            rc.last_error, rc.last_error_at = aws.describe_error(exc), now
            FileSystem.objects.filter(region=rc.region, deleted__isnull=True).update(
                last_error=rc.last_error, last_error_at=now
            )
            log.warning("EFS collection in %s failed: %s", rc.region, rc.last_error)
        if rc.next_rollup <= now:
            for fs in FileSystem.objects.filter(region=rc.region):
                history.rollup(fs, now)
            rc.next_rollup = now + timedelta(hours=1)
        # The stalest mode comparisons, a share of the region a cycle (see pricing.REFRESH).
        interval = timedelta(minutes=settings.VIGIL_EFS_INTERVAL_MINUTES)
        pricing.price_region(rc, now, spread=interval)
        rc.save(
            update_fields=[
                "next_discovery",
                "next_rollup",
                "last_success",
                "last_error",
                "last_error_at",
                "api_calls",
                "dropped_values",
                "dropped_note",
            ]
        )
        counts = collect.judge_region(rc, now)
        return {
            "api_calls": outcome.api_calls if outcome else 0,
            "rows": outcome.rows if outcome else 0,
            "dropped": outcome.dropped_values if outcome else 0,
            "late_rows": outcome.late_rows if outcome else 0,
            "statuses": counts,
        }

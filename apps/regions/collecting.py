"""What the AWS concerns (EFS, EBS) share in running one collection per account-region: a
concern keeps each region's state in a model of its own (a ``region`` one-to-one, a
``claim_due(now)`` that claims by compare-and-set, a lease) and its ``tasks.py`` hands it here."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Model
from django.utils import timezone

from apps.lib import leases

from .models import Region


def dispatch_due(collection: Any, task: Any, now: datetime) -> int:
    """Give every shown AWS region a ``collection`` row, claim the due ones and queue
    ``task(pk, region=<code>)`` for each (per-region queues can take it); how many."""
    related = collection._meta.get_field("region").remote_field.related_name
    missing = Region.objects.shown().filter(kind=Region.Kind.AWS, **{f"{related}__isnull": True})
    for region in missing:
        collection.objects.get_or_create(region=region, defaults={"next_due": now})
    claimed = collection.claim_due(now)
    rows = collection.objects.filter(pk__in=claimed, region__in=Region.objects.shown())
    for pk, code in rows.values_list("pk", "region__code"):
        task.delay(pk, region=code)
    return len(claimed)


def run_leased(
    collection: type[Model], collection_id: int, run: Callable[[int, datetime], dict]
) -> dict | None:
    """``run(collection_id, now)`` under the row's lease; None if it is already running. The
    lease lasts as long as a task may run (its hard time limit): a live collection never loses
    it, and one whose worker was killed frees its region as soon as it surely is dead."""
    ttl = timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    with leases.lease(collection, collection_id, ttl) as held:
        if not held:
            return None
        return run(collection_id, timezone.now())

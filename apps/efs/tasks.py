"""Celery glue for EFS: one task per account-region (discover when due, collect, judge).

``dispatch_due`` runs on the beat tick: it makes sure every monitored AWS region has a
``RegionCollection`` row, claims the due ones by compare-and-set and queues
``collect_region`` with ``region=<code>`` so per-region queues can take it
(``apps/regions/collecting.py``, shared with the other AWS concern).
"""

from __future__ import annotations

from datetime import datetime

from celery import shared_task

from apps.regions import collecting

from . import collect
from .models import RegionCollection


def dispatch_due(now: datetime) -> int:
    """Queue the collections that are due; how many."""
    return collecting.dispatch_due(RegionCollection, collect_region, now)


@shared_task
def collect_region(collection_id: int, region: str | None = None) -> dict | None:
    """Discover (when due), collect and judge one account-region; None if already running."""
    return collecting.run_leased(RegionCollection, collection_id, collect.run_cycle)

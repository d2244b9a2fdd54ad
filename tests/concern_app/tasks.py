"""Celery glue for the gadgets: the beat tick's dispatcher and one task."""

from __future__ import annotations

from datetime import datetime

from celery import shared_task

from .collect import collect
from .models import Gadget


def dispatch_due(now: datetime) -> int:
    """Queue the gadgets never collected; how many."""
    due = list(Gadget.objects.filter(status_changed__isnull=True).values_list("pk", "region__code"))
    for pk, region in due:
        collect_gadget.delay(pk, region=region)
    return len(due)


@shared_task
def collect_gadget(gadget_id: int, reading: float | None = None, region: str | None = None) -> str:
    gadget = Gadget.objects.get(pk=gadget_id)
    return collect(gadget, reading).status.value

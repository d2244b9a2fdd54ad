"""Glue: deliver the outbox now (queued when a transition commits), and a periodic sweep."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from . import delivery, routing


@shared_task(time_limit=300, soft_time_limit=280)
def send_alerts() -> int:
    return delivery.send_due()


@shared_task(time_limit=300, soft_time_limit=280)
def sweep() -> int:
    """Every 30 s: reminders that are due, then anything the queue did not deliver."""
    routing.queue_reminders(timezone.now())
    return delivery.send_due()

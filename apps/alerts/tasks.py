"""Glue: deliver the outbox now (queued when a transition commits), and a periodic sweep."""

from __future__ import annotations

from celery import shared_task
from django.core.cache import cache
from django.utils import timezone

from . import delivery, routing


def _deliver() -> int:
    """Send what is due, then queue one more delivery for when the earliest held channel and
    region may be sent again (one wake per hold, not one per queued task)."""
    sent = delivery.send_due()
    release = delivery.next_release()
    if release is not None:
        when, (channel_id, region_id) = release
        key = f"vigil:alerts:wake:{channel_id}:{region_id}:{when.timestamp():.3f}"
        if cache.add(key, 1, timeout=60):
            send_alerts.apply_async(eta=when)
    return sent


@shared_task(time_limit=300, soft_time_limit=280)
def send_alerts() -> int:
    return _deliver()


@shared_task(time_limit=300, soft_time_limit=280)
def sweep() -> int:
    """Every 30 s: reminders, flapping subjects that settled, and what the queue left."""
    now = timezone.now()
    routing.queue_reminders(now)
    routing.release_settled(now)
    return _deliver()

"""Glue: deliver the outbox now (queued when a transition commits), and a periodic sweep."""

from __future__ import annotations

from celery import shared_task
from django.core.cache import cache
from django.utils import timezone

from . import delivery, routing


def _wake_when_released() -> None:
    """Queue one more delivery for when the earliest held channel and region may be sent."""
    release = delivery.next_release()
    if release is None:
        return
    when, (channel_id, region_id) = release
    key = f"vigil:alerts:wake:{channel_id}:{region_id}:{when.timestamp():.3f}"
    if cache.add(key, 1, timeout=60):  # one wake per hold, not one per queued task
        send_alerts.apply_async(eta=when)


@shared_task(time_limit=300, soft_time_limit=280)
def send_alerts() -> int:
    sent = delivery.send_due()
    _wake_when_released()
    return sent


@shared_task(time_limit=300, soft_time_limit=280)
def sweep() -> int:
    """Every 30 s: reminders, flapping subjects that settled, and what the queue left."""
    now = timezone.now()
    routing.queue_reminders(now)
    routing.release_settled(now)
    sent = delivery.send_due()
    _wake_when_released()
    return sent

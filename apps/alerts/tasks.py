"""Glue: deliver the outbox now (queued when a transition commits), a periodic sweep, and the
daily check for alerts nobody received."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from . import delivery, routing
from .models import Silence


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


WAKE_MARGIN = timedelta(milliseconds=500)


def _wake_at_silence_ends(now) -> None:
    """Silences ending before the next sweep: a release at each one's end, not up to a sweep
    later (one wake per end, as for holds)."""
    horizon = now + timedelta(seconds=1.5 * settings.VIGIL_ALERT_SWEEP_SECONDS)
    ending = Silence.objects.filter(released=None, ends__gt=now, ends__lte=horizon)
    for ends in ending.order_by("ends").values_list("ends", flat=True).distinct()[:200]:
        wake_at_silence_end(ends)


def wake_at_silence_end(ends) -> None:
    """Queue a release for the moment a silence ends (once per end, as far as the cache
    knows; a second one finds nothing to release)."""
    key = f"vigil:alerts:silence-end:{ends.timestamp():.3f}"
    if cache.add(key, 1, timeout=int(2 * settings.VIGIL_ALERT_SWEEP_SECONDS) + 60):
        # A timer may fire a little early; a release before the end would wait a sweep.
        release_silences.apply_async(eta=ends + WAKE_MARGIN)


@shared_task(time_limit=300, soft_time_limit=280)
def sweep() -> int:
    """Every VIGIL_ALERT_SWEEP_SECONDS: reminders, escalations due, flapping subjects that
    settled, silences and maintenance windows that ended, and what the queue left."""
    now = timezone.now()
    routing.queue_reminders(now)
    routing.queue_escalations(now)
    routing.release_settled(now)
    routing.release_ended_silences(now)
    routing.release_windows(now)
    _wake_at_silence_ends(now)
    return _deliver()


@shared_task(time_limit=300, soft_time_limit=280)
def release_silences() -> int:
    """At a silence's end: what it held and is still failing goes to the outbox, and out."""
    released = routing.release_ended_silences(timezone.now())
    if released:
        _deliver()
    return released


@shared_task(time_limit=300, soft_time_limit=280)
def undeliverable() -> int:
    """Daily: alerts nobody received go to the default rule's other channels."""
    queued = routing.escalate_undeliverable(timezone.now())
    if queued:
        _deliver()
    return queued

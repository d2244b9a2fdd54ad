"""Deliver the outbox: claim due notifications with a lease, send, record the outcome.

A claim is a compare-and-set on ``lease_until``: exactly one worker wins a row. A worker that
dies after claiming leaves the lease to expire, and the next sweep claims the row again, so a
notification is delayed, never dropped. The outcome is written only by the lease holder.
Pending notifications of one kind, channel and region are sent together as one email, and
after an email to a channel about a region the next one is held (``held``), gathering what
changed meanwhile: a lone alert goes out at once, news of other subjects a second later, and
the same subjects changing again in a storm wait longer, so a storm becomes a few emails.

The one window left: SES accepted a message and the worker died before writing "sent"; that
notification is sent again after the lease (at least once, never zero times).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Exists, F, Max, OuterRef, Q
from django.utils import timezone

from .models import Channel, Notification
from .transports import TRANSPORTS, TransportError

log = logging.getLogger(__name__)

BACKOFF_SECONDS = (5, 15, 60, 300, 900, 1800)
MAX_GROUP = 250  # notifications per email; the email lists each subject once (content.py)


def _due(now):
    return Notification.objects.filter(
        Q(lease_until__isnull=True) | Q(lease_until__lt=now),
        state=Notification.State.PENDING,
        next_attempt__lte=now,
    )


def _has_news(now, channel_id: int, region_id: int) -> bool:
    """Something is due about a subject this channel has not been told about lately."""
    since = now - timedelta(minutes=settings.VIGIL_ALERT_FLAP_MINUTES)
    told = Notification.objects.filter(
        channel_id=OuterRef("channel_id"),
        state=Notification.State.SENT,
        sent__gt=since,
        transition__content_type=OuterRef("transition__content_type"),
        transition__object_id=OuterRef("transition__object_id"),
    )
    due = _due(now).filter(channel_id=channel_id, transition__region_id=region_id)
    return due.exclude(Exists(told)).exists()


def held(now) -> list[tuple[int, int, datetime]]:
    """(channel, region, release time) of each pair whose next email must wait.

    After an email, a channel and region wait ``VIGIL_ALERT_HOLD_SECONDS``; then they may
    send again at once if a subject changed that the channel has not heard of lately, and
    otherwise (only the same subjects changing again) after ``VIGIL_ALERT_REPEAT_HOLD_SECONDS``.
    """
    hold = timedelta(seconds=settings.VIGIL_ALERT_HOLD_SECONDS)
    repeat = timedelta(seconds=settings.VIGIL_ALERT_REPEAT_HOLD_SECONDS)
    if not (hold or repeat):
        return []
    recent = (
        Notification.objects.filter(state=Notification.State.SENT, sent__gt=now - max(hold, repeat))
        .values("channel_id", "transition__region_id")
        .annotate(last=Max("sent"))
    )
    holds = []
    for r in recent:
        channel_id, region_id, last = r["channel_id"], r["transition__region_id"], r["last"]
        release = last + hold
        if release <= now:
            if last + repeat <= now or _has_news(now, channel_id, region_id):
                continue
            release = last + repeat
        holds.append((channel_id, region_id, release))
    return holds


def _sendable(now, holds: list[tuple[int, int, datetime]]):
    due = _due(now)
    for channel_id, region_id, _release in holds:
        due = due.exclude(channel_id=channel_id, transition__region_id=region_id)
    return due


def claim_batch(now=None) -> list[Notification]:
    """Claim the oldest due notification that is not held, and those that can share its email."""
    now = now or timezone.now()
    lease = now + timedelta(seconds=settings.VIGIL_ALERT_LEASE_SECONDS)
    holds = held(now)
    while True:
        sendable = _sendable(now, holds)
        first = sendable.select_related("transition").order_by("next_attempt", "pk").first()
        if first is None:
            return []
        window = timedelta(seconds=settings.VIGIL_ALERT_GROUP_SECONDS)
        candidates = [first] + list(
            sendable.filter(
                channel_id=first.channel_id,
                kind=first.kind,
                transition__region_id=first.transition.region_id,
                created__lte=first.created + window,
            )
            .exclude(pk=first.pk)
            .order_by("created", "pk")[: MAX_GROUP - 1]
        )
        claimed = []
        for n in candidates:
            won = _due(now).filter(pk=n.pk).update(lease_until=lease, attempts=F("attempts") + 1)
            if won:
                n.lease_until = lease
                n.attempts += 1
                claimed.append(n)
        if claimed:
            return claimed
        # Another worker won all of them: look again.


def _finish(notifications: list[Notification], **changes) -> int:
    done = 0
    for n in notifications:
        done += Notification.objects.filter(
            pk=n.pk, state=Notification.State.PENDING, lease_until=n.lease_until
        ).update(lease_until=None, **changes)
    return done


def deliver(notifications: list[Notification]) -> None:
    channel = Channel.objects.get(pk=notifications[0].channel_id)
    now = timezone.now()
    group_key = f"{notifications[0].pk}" if len(notifications) > 1 else ""
    try:
        transport = TRANSPORTS[channel.kind](channel)
        try:
            message_id = transport.notify(notifications)
        except TransportError:
            raise
        except Exception as exc:  # a bug of ours: keep it visible and retry, never drop it
            log.exception("Could not deliver through %s", channel)
            raise TransportError(f"Vigil error: {type(exc).__name__}: {exc}") from exc
    except TransportError as exc:
        Channel.objects.filter(pk=channel.pk).update(last_error=exc.message, last_error_at=now)
        if exc.permanent:
            log.warning("Permanent failure on %s: %s", channel, exc.message)
            _finish(notifications, state=Notification.State.FAILED, last_error=exc.message)
        else:
            for n in notifications:
                delay = BACKOFF_SECONDS[min(n.attempts, len(BACKOFF_SECONDS)) - 1]
                _finish([n], last_error=exc.message, next_attempt=now + timedelta(seconds=delay))
        return
    _finish(
        notifications,
        state=Notification.State.SENT,
        sent=now,
        message_id=message_id[:255],
        group_key=group_key,
        last_error="",
    )
    Channel.objects.filter(pk=channel.pk).update(last_success=now)


def next_release(now=None) -> tuple[datetime, tuple[int, int]] | None:
    """When the earliest held channel and region with something due may be sent again."""
    now = now or timezone.now()
    for channel_id, region_id, release in sorted(held(now), key=lambda h: h[2]):
        if _due(now).filter(channel_id=channel_id, transition__region_id=region_id).exists():
            return release, (channel_id, region_id)
    return None


def send_due(max_batches: int = 100) -> int:
    """Send what is due, one email per batch; returns the number of emails attempted."""
    sent = 0
    for _ in range(max_batches):
        batch = claim_batch()
        if not batch:
            break
        deliver(batch)
        sent += 1
    return sent

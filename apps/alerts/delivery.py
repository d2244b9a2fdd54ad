"""Deliver the outbox: claim due notifications with a lease, send, record the outcome.

A claim is a compare-and-set on ``lease_until``: exactly one worker wins a row. A worker that
dies after claiming leaves the lease to expire, and the next sweep claims the row again, so a
notification is delayed, never dropped. The outcome is written only by the lease holder.
Pending notifications of one kind, channel and region are sent together as one email, and
after an email to a channel about a region the next one is held (``held``), gathering what
changed meanwhile: a lone alert goes out at once, news of other subjects a second later, and
the same subjects changing again in a storm wait longer, so a storm becomes a few emails.

Each recipient of a channel is sent separately and recorded as soon as it has the message, so
one bad address fails alone and a retry skips those who have it. The one window left: SES (or
a webhook) accepted a message and the worker died before recording it; that recipient gets it
again after the lease (at least once, never zero times; webhooks carry ids to drop repeats).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Exists, F, Max, OuterRef, Q
from django.utils import timezone

from .integrations import CONFIGURATION, RECIPIENT, TRANSPORTS, Transport, TransportError
from .models import Channel, Notification

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


def _record(n: Notification, **changes) -> bool:
    """Write per-recipient progress, only while ``n`` is still ours (its lease)."""
    return bool(
        Notification.objects.filter(
            pk=n.pk, state=Notification.State.PENDING, lease_until=n.lease_until
        ).update(**changes)
    )


def _send(transport, recipient: str, todo: list[Notification]) -> str:
    try:
        return transport.send(recipient, todo)
    except TransportError:
        raise
    except Exception as exc:  # a bug of ours: keep it visible and retry, never drop it
        log.exception("Could not deliver through %s", transport.channel)
        raise TransportError(f"Vigil error: {type(exc).__name__}: {exc}") from exc


def deliver(notifications: list[Notification]) -> None:
    """Send ``notifications`` (one batch) to each recipient of their channel, one by one.

    A recipient who has it is recorded at once (``delivered``), one who refuses it for good in
    ``refused``; a retry sends only to the others. When every recipient has it or refused it,
    the notification is sent (failed if nobody has it); otherwise it is retried with backoff,
    and a configuration failure is shown to admins on every page (``Channel.config_error``).
    """
    channel = Channel.objects.get(pk=notifications[0].channel_id)
    now = timezone.now()
    transport = TRANSPORTS[channel.kind](channel)
    recipients = transport.recipients()
    errors, message_ids = _send_to_each(transport, recipients, notifications)
    error_text = "; ".join(dict.fromkeys(e.message for e in errors))[:2000]
    _note_on_channel(channel, errors, error_text, message_ids, now)
    group_key = f"{notifications[0].pk}" if len(notifications) > 1 else ""
    _settle(notifications, recipients, errors, error_text, message_ids, group_key, now)


def _send_to_each(
    transport: Transport, recipients: list[str], notifications: list[Notification]
) -> tuple[list[TransportError], list[str]]:
    """Send each recipient the notifications it has neither had nor refused, recording each
    as it goes; the errors met and the message ids."""
    errors: list[TransportError] = []
    message_ids: list[str] = []
    if not recipients:
        errors.append(TransportError("The channel has no email address", failure=RECIPIENT))
    for recipient in recipients:
        todo = [
            n for n in notifications if recipient not in n.delivered and recipient not in n.refused
        ]
        if not todo:
            continue
        try:
            message_ids.append(_send(transport, recipient, todo))
        except TransportError as exc:
            errors.append(exc)
            if exc.failure == RECIPIENT:
                for n in todo:
                    n.refused = {**n.refused, recipient: exc.message[:500]}
                    _record(n, refused=n.refused)
            elif exc.failure == CONFIGURATION:
                break  # Vigil's own setup: the other recipients would be refused alike
            continue
        for n in todo:
            n.delivered = [*n.delivered, recipient]
            _record(n, delivered=n.delivered)
    return errors, message_ids


def _note_on_channel(
    channel: Channel,
    errors: list[TransportError],
    error_text: str,
    message_ids: list[str],
    now: datetime,
) -> None:
    """Keep the attempt's last error, its last success and any configuration failure (shown
    to admins until a send succeeds) on the channel."""
    config = next((e for e in errors if e.failure == CONFIGURATION), None)
    channel_changes: dict = {}
    if errors:
        channel_changes.update(last_error=error_text, last_error_at=now)
        log.warning("Delivery through %s failed: %s", channel, error_text)
    if config is not None:
        channel_changes.update(config_error=config.message[:2000], config_error_at=now)
    elif message_ids:
        channel_changes.update(config_error="", config_error_at=None)
    if message_ids:
        channel_changes.update(last_success=now)
    if channel_changes:
        Channel.objects.filter(pk=channel.pk).update(**channel_changes)


def _settle(
    notifications: list[Notification],
    recipients: list[str],
    errors: list[TransportError],
    error_text: str,
    message_ids: list[str],
    group_key: str,
    now: datetime,
) -> None:
    """Each notification's outcome: retried with backoff while a recipient is left and the
    error may pass, else sent (to whoever has it) or failed (nobody has it)."""
    retry = next((e for e in errors if e.failure != RECIPIENT), None)
    # The backoff counts from the failure, not from the start of the attempt: an attempt slower
    # than the first backoff (5 s: a slow SES on a loaded machine) was due again at once.
    failed_at = timezone.now()
    for n in notifications:
        left = [r for r in recipients if r not in n.delivered and r not in n.refused]
        if left and retry is not None:
            delay = BACKOFF_SECONDS[min(n.attempts, len(BACKOFF_SECONDS)) - 1]
            _finish(
                [n],
                last_error=error_text,
                failure=retry.failure,
                next_attempt=failed_at + timedelta(seconds=delay),
            )
        elif n.delivered:
            refused = "; ".join(f"{r}: {why}" for r, why in n.refused.items())
            _finish(
                [n],
                state=Notification.State.SENT,
                sent=now,
                message_id=",".join(filter(None, message_ids))[:255],
                group_key=group_key,
                last_error=refused[:2000],
                failure=Notification.Failure.RECIPIENT if n.refused else "",
            )
        else:
            _finish(
                [n],
                state=Notification.State.FAILED,
                last_error=error_text or "Refused by every recipient",
                failure=Notification.Failure.RECIPIENT,
            )


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

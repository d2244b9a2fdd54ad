"""From a transition to its incident and its outbox rows, inside record()'s transaction.

Routing, silences and flap damping are decided here, when the transition is written, so that a
transition and the notifications it owes are committed together: nothing can be lost between
them, whatever happens to the workers or the broker afterwards.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Exists, F, OuterRef, Q

from apps.regions.models import Region

from .models import Channel, Incident, Notification, Rule, Silence, SubjectRef, Transition, severity


def channels_for(transition: Transition) -> list[Channel]:
    """Channels of every enabled rule matching the transition; the default rule's otherwise."""
    rules = list(Rule.objects.filter(enabled=True).prefetch_related("channels"))
    matched = [r for r in rules if not r.is_default and r.matches(transition)]
    if not matched:
        matched = [r for r in rules if r.is_default and r.matches(transition)]
    channels = {c.pk: c for r in matched for c in r.channels.all() if not c.disabled}
    return list(channels.values())


def active_silence(ref: SubjectRef, now: datetime) -> Silence | None:
    candidates = Silence.objects.filter(starts__lte=now, ends__gt=now).filter(
        Q(region__isnull=True) | Q(region_id=ref.region_id)
    )
    return next((s for s in candidates if s.matches(ref)), None)


def update_incident(transition: Transition) -> Incident | None:
    open_incident = (
        Incident.objects.select_for_update()
        .filter(content_type=transition.content_type, object_id=transition.object_id, closed=None)
        .first()
    )
    now = transition.created
    if transition.is_recovery:
        if open_incident:
            Incident.objects.filter(pk=open_incident.pk).update(
                closed=now,
                status=transition.new_status,
                reason=transition.reason,
                last_transition=transition,
                next_reminder=None,
            )
        return open_incident
    reminder = now + timedelta(hours=settings.VIGIL_ALERT_REMINDER_HOURS)
    if open_incident is None:
        return Incident.objects.create(
            content_type=transition.content_type,
            object_id=transition.object_id,
            region_id=transition.region_id,
            concern=transition.concern,
            subject_label=transition.subject_label,
            status=transition.new_status,
            reason=transition.reason,
            opened=now,
            last_transition=transition,
            next_reminder=reminder,
        )
    changes = {
        "status": transition.new_status,
        "reason": transition.reason,
        "last_transition": transition,
    }
    if severity(transition.new_status) > severity(open_incident.status):
        changes.update(acknowledged=None, acknowledged_by=None, next_reminder=reminder)
    Incident.objects.filter(pk=open_incident.pk).update(**changes)
    return open_incident


def _flapping(transition: Transition) -> bool:
    since = transition.created - timedelta(minutes=settings.VIGIL_ALERT_FLAP_MINUTES)
    changes = Transition.objects.filter(
        content_type=transition.content_type, object_id=transition.object_id, created__gte=since
    ).count()
    return changes > settings.VIGIL_ALERT_FLAP_CHANGES


def _flap_notice_sent_recently(transition: Transition) -> bool:
    since = transition.created - timedelta(minutes=settings.VIGIL_ALERT_FLAP_MINUTES)
    return Notification.objects.filter(
        kind=Notification.Kind.FLAPPING,
        created__gte=since,
        transition__content_type=transition.content_type,
        transition__object_id=transition.object_id,
    ).exists()


def enqueue(transition: Transition) -> list[Notification]:
    """The outbox rows this transition owes, one per channel.

    A subject of a hidden region (disabled, or a demo site out of demo mode) keeps its
    history but pages nobody.
    """
    if not Region.objects.shown().filter(pk=transition.region_id).exists():
        return []
    channels = channels_for(transition)
    if not channels:
        return []
    kind, state = Notification.Kind.TRANSITION, Notification.State.PENDING
    if active_silence(transition, transition.created):
        state = Notification.State.SILENCED
    elif _flapping(transition):
        if _flap_notice_sent_recently(transition):
            state = Notification.State.SUPPRESSED
        else:
            kind = Notification.Kind.FLAPPING
    return Notification.objects.bulk_create(
        Notification(
            transition=transition,
            channel=channel,
            kind=kind,
            state=state,
            created=transition.created,
            next_attempt=transition.created,
        )
        for channel in channels
    )


def on_transition(transition: Transition) -> list[Notification]:
    update_incident(transition)
    return enqueue(transition)


def queue_reminders(now: datetime) -> int:
    """A reminder per channel for each open, unacknowledged incident that is due one."""
    interval = timedelta(hours=settings.VIGIL_ALERT_REMINDER_HOURS)
    queued = 0
    due = Incident.objects.filter(
        closed=None,
        acknowledged=None,
        next_reminder__lte=now,
        region__in=Region.objects.shown(),
    )
    for incident in due.select_related("last_transition"):
        won = Incident.objects.filter(
            pk=incident.pk, next_reminder=incident.next_reminder, closed=None
        ).update(next_reminder=now + interval, reminders_sent=F("reminders_sent") + 1)
        if not won or active_silence(incident, now):
            continue
        transition = incident.last_transition
        for channel in channels_for(transition):
            Notification.objects.get_or_create(
                transition=transition,
                channel=channel,
                kind=Notification.Kind.REMINDER,
                sequence=incident.reminders_sent + 1,
                defaults={"created": now, "next_attempt": now},
            )
            queued += 1
    return queued


def release_settled(now: datetime) -> int:
    """Send where a flapping subject ended up, once it has not changed for the settle time.

    While a subject flaps, its changes after the summary are suppressed; its latest one is
    released (sent as an ordinary change) when no newer change followed within
    ``VIGIL_ALERT_SETTLE_MINUTES``, so the on-call engineer learns how it settled.
    """
    quiet = timedelta(minutes=settings.VIGIL_ALERT_SETTLE_MINUTES)
    newer = Transition.objects.filter(
        content_type=OuterRef("transition__content_type"),
        object_id=OuterRef("transition__object_id"),
        created__gt=OuterRef("transition__created"),
    )
    settled = Notification.objects.filter(
        state=Notification.State.SUPPRESSED,
        transition__created__lte=now - quiet,
        transition__created__gt=now - quiet - timedelta(days=1),
    ).exclude(Exists(newer))
    return settled.update(state=Notification.State.PENDING, next_attempt=now)

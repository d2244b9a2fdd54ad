"""From a transition to its incident and its outbox rows, inside record()'s transaction.

Routing, silences and flap damping are decided here, when the transition is written, so that a
transition and the notifications it owes are committed together: nothing can be lost between
them, whatever happens to the workers or the broker afterwards.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Exists, F, OuterRef, Q

from apps.lib.status import Cause as KnownCause
from apps.regions.models import Region

from .models import (
    Cause,
    Channel,
    Dependency,
    EscalationLevel,
    Incident,
    IncidentEvent,
    MaintenanceWindow,
    Notification,
    Rule,
    Silence,
    SubjectRef,
    Transition,
    severity,
)

#: What was sent (or is being sent) about an incident: its channels were told.
TOLD = (
    Notification.State.SENT,
    Notification.State.PENDING,
    Notification.State.FAILED,
    Notification.State.SUPPRESSED,
)


def matching_rules(transition: Transition) -> list[Rule]:
    """Every enabled rule matching the transition; the default rule otherwise."""
    rules = list(Rule.objects.filter(enabled=True).prefetch_related("channels"))
    matched = [r for r in rules if not r.is_default and r.matches(transition)]
    if not matched:
        matched = [r for r in rules if r.is_default and r.matches(transition)]
    return matched


def channels_for(transition: Transition, incident: Incident | None = None) -> list[Channel]:
    """Channels of every enabled rule matching the transition (the default rule's otherwise),
    and those of the escalation levels its incident already reached."""
    matched = matching_rules(transition)
    channels = {c.pk: c for r in matched for c in r.channels.all() if not c.disabled}
    if incident is not None and incident.escalation_policy_id and incident.escalation_level:
        for level in escalation_levels(incident.escalation_policy_id)[: incident.escalation_level]:
            channels.update({c.pk: c for c in level.channels.all() if not c.disabled})
    return list(channels.values())


def escalation_levels(policy_id: int) -> list[EscalationLevel]:
    """A policy's levels, first first (by delay)."""
    return list(
        EscalationLevel.objects.filter(policy_id=policy_id)
        .order_by("delay_minutes", "pk")
        .prefetch_related("channels")
    )


def start_escalation(transition: Transition, incident: Incident) -> None:
    """A new incident: the policy of the first matching rule that has one; its levels due at
    once (delay 0) are told with the rules' channels, the next one is due after its delay."""
    policy_id = next((r.escalation_id for r in matching_rules(transition) if r.escalation_id), None)
    if policy_id is None:
        return
    levels = escalation_levels(policy_id)
    reached = sum(1 for level in levels if level.delay_minutes <= 0)
    incident.escalation_policy_id, incident.escalation_level = policy_id, reached
    incident.next_escalation = (
        incident.opened + timedelta(minutes=levels[reached].delay_minutes)
        if reached < len(levels)
        else None
    )
    Incident.objects.filter(pk=incident.pk).update(
        escalation_policy_id=policy_id,
        escalation_level=reached,
        next_escalation=incident.next_escalation,
    )


def active_silence(ref: SubjectRef, now: datetime) -> Silence | MaintenanceWindow | None:
    """The silence, or the open maintenance window, holding ``ref`` back at ``now``."""
    candidates = Silence.objects.filter(starts__lte=now, ends__gt=now).filter(
        Q(region__isnull=True) | Q(region_id=ref.region_id)
    )
    return next((s for s in candidates if s.matches(ref)), None) or active_window(ref, now)


def active_window(ref: SubjectRef, now: datetime) -> MaintenanceWindow | None:
    windows = MaintenanceWindow.objects.filter(enabled=True).filter(
        Q(region__isnull=True) | Q(region_id=ref.region_id)
    )
    return next((w for w in windows if w.matches(ref) and w.schedule.open_at(now)), None)


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
        created = Incident.objects.create(
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
        start_escalation(transition, created)
        return created
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


def _told(**where: object):
    """Notifications that told their channel (sent, being sent, failed, or held back while
    the subject flaps: the channel had the flapping summary), filtered by ``where``."""
    return Notification.objects.filter(state__in=TOLD, **where)


def _of_incident(incident: Incident) -> dict[str, object]:
    """``_told``'s filter for the changes of ``incident`` (its subject's, since it opened)."""
    return {
        "transition__content_type_id": incident.content_type_id,
        "transition__object_id": incident.object_id,
        "transition__created__gte": incident.opened,
    }


def told_about(incident: Incident) -> list[Channel]:
    """Channels that were told something about ``incident``."""
    told = _told(**_of_incident(incident)).values("channel_id")
    return list(Channel.objects.filter(disabled=False, pk__in=told))


def told_alone(incident: Incident) -> set[int]:
    """Channels told about a change of ``incident`` that was not its cause's."""
    told = _told(transition__cause=None, **_of_incident(incident))
    return set(told.values_list("channel_id", flat=True))


def told_about_cause(cause: Cause, excluding: Transition | None = None) -> set[int]:
    """Channels told about any subject of the incident by cause ``cause``."""
    told = _told(transition__cause=cause, channel__disabled=False)
    if excluding is not None:
        told = told.exclude(transition=excluding)
    return set(told.values_list("channel_id", flat=True))


def attach_cause(
    transition: Transition, incident: Incident | None, known: KnownCause | None
) -> tuple[Cause | None, bool]:
    """Join the subject's incident to its cause's (opened by the first subject failing for
    it); a recovery leaves it, and closes it when it was the last. (The cause, whether this
    transition closed it.)"""
    if incident is None:
        return None, False
    now = transition.created
    if known is None:
        cause = incident.cause
        if cause is None or not transition.is_recovery:
            # Not failing for a known cause (now): its change is its own, sent as any other;
            # it stays listed on its cause's incident until it recovers.
            return None, False
        others = cause.incidents.filter(closed=None).exclude(pk=incident.pk).exists()
        if others:
            return cause, False  # the cause's incident stays open: nothing to resolve yet
        Cause.objects.filter(pk=cause.pk, closed=None).update(closed=now, status="ok")
        Transition.objects.filter(pk=transition.pk).update(cause=cause)
        transition.cause = cause
        return cause, True
    cause = Cause.objects.select_for_update().filter(key=known.key, closed=None).first()
    if cause is None:
        cause = Cause.objects.create(
            key=known.key,
            label=known.label,
            region_id=transition.region_id,
            concern=transition.concern,
            status=transition.new_status,
            opened=now,
        )
    elif severity(transition.new_status) > severity(cause.status):
        Cause.objects.filter(pk=cause.pk).update(status=transition.new_status)
    if incident.cause_id != cause.pk:
        Incident.objects.filter(pk=incident.pk).update(cause=cause)
        left = incident.cause_id
        if left and not Incident.objects.filter(cause_id=left, closed=None).exists():
            Cause.objects.filter(pk=left, closed=None).update(closed=now)  # none left in it
    Transition.objects.filter(pk=transition.pk).update(cause=cause)
    transition.cause = cause
    return cause, False


def dependency_key(content_type_id: int, object_id: int) -> str:
    """The key of the incident by cause a declared upstream's failure opens for its dependents."""
    return f"dependency/{content_type_id}/{object_id}"


def failing_upstream(transition: Transition) -> Incident | None:
    """When the change is a failure, the open incident of what ``transition``'s subject is
    declared to depend on, directly or through others (A on B on C: C failing holds A and B):
    of the upstreams failing, one not itself held by another's (the root), the oldest; else
    None."""
    if transition.is_recovery:
        return None
    upstreams = Dependency.upstreams_of(transition.content_type_id, transition.object_id)
    found = Q(pk__in=[])
    for type_id, object_id in upstreams:
        found |= Q(content_type_id=type_id, object_id=object_id)
    failing = list(
        Incident.objects.filter(found, closed=None).select_related("cause").order_by("opened", "pk")
    )
    roots = [i for i in failing if not _held_by_upstream(i)]
    return (roots or failing or [None])[0]


def _held_by_upstream(incident: Incident) -> bool:
    """``incident`` joined a declared upstream's incident by cause (not as that upstream)."""
    key = incident.cause.key if incident.cause_id else ""
    own = dependency_key(incident.content_type_id, incident.object_id)
    return key.startswith("dependency/") and key != own


def release_dependents(transition: Transition, incident: Incident | None) -> int:
    """An upstream recovered: its dependents' incident by cause closes, and each dependent
    still failing is sent what was held back of its latest change, on its own from now on."""
    if not transition.is_recovery:
        return 0
    key = dependency_key(transition.content_type_id, transition.object_id)
    cause = Cause.objects.select_for_update().filter(key=key, closed=None).first()
    if cause is None:
        return 0
    now = transition.created
    released = 0
    for member in cause.incidents.filter(closed=None).select_related("last_transition"):
        released += _send_late(member.last_transition, now, held=Notification.State.INHIBITED)
        # its own change from now on: sent, and its recovery sent, as the subject's alone
        Transition.objects.filter(pk=member.last_transition_id, cause=cause).update(cause=None)
    cause.incidents.filter(closed=None).update(cause=None)
    if incident is not None and incident.cause_id == cause.pk:
        Incident.objects.filter(pk=incident.pk).update(cause=None)
        incident.cause = None
    Cause.objects.filter(pk=cause.pk).update(closed=now, status="ok")
    return released


def enqueue(
    transition: Transition,
    incident: Incident | None = None,
    cause: Cause | None = None,
    closing: bool = False,
    upstream: Incident | None = None,
) -> list[Notification]:
    """The outbox rows this transition owes, one per channel.

    A subject failing for a known cause (``cause``) is sent only to channels not told about
    the cause yet: the others keep it as ``inhibited``, listed on the incident by cause. Its
    recovery is sent only when it closes the cause (``closing``), to every channel told.

    A recovery goes to exactly the channels told about the incident it closes, whatever the
    rules say of this last change (critical → warning → ok closes a PagerDuty incident too),
    and nowhere when none was: a first check that finds a subject ok, or the end of a
    warning nobody was sent, is no news. A subject of a hidden region (disabled, or a demo
    site out of demo mode) keeps its history but pages nobody.
    """
    if not Region.objects.shown().filter(pk=transition.region_id).exists():
        return []
    if transition.is_recovery:
        channels = told_about(incident) if incident is not None else []
        if cause is not None and closing:
            told = told_about_cause(cause) - {c.pk for c in channels}
            channels += list(Channel.objects.filter(pk__in=told))
    else:
        channels = channels_for(transition, incident)
    if not channels:
        return []
    kind, state = Notification.Kind.TRANSITION, Notification.State.PENDING
    inhibited: set[int] = set()
    if cause is not None and not closing:
        if transition.is_recovery:  # only channels told of it alone hear it recovered
            inhibited = {c.pk for c in channels} - told_alone(incident)
        else:
            inhibited = told_about_cause(cause, excluding=transition)
            if upstream is not None:  # a declared dependency: the upstream's channels
                inhibited |= {c.pk for c in told_about(upstream)}
    if active_silence(transition, transition.created):
        state = Notification.State.SILENCED
    elif _flapping(transition):
        if _flap_notice_sent_recently(transition):
            state = Notification.State.SUPPRESSED
        else:
            kind = Notification.Kind.FLAPPING
    rows = Notification.objects.bulk_create(
        Notification(
            transition=transition,
            channel=channel,
            kind=kind,
            state=Notification.State.INHIBITED
            if channel.pk in inhibited and state == Notification.State.PENDING
            else state,
            created=transition.created,
            next_attempt=transition.created,
        )
        for channel in channels
    )
    return [n for n in rows if n.state != Notification.State.INHIBITED]


def on_transition(transition: Transition, known: KnownCause | None = None) -> list[Notification]:
    incident = update_incident(transition)
    release_dependents(transition, incident)
    upstream = None
    if (
        known is None
        and incident is not None
        and (incident.cause_id is None or incident.cause.key.startswith("dependency/"))
    ):
        upstream = failing_upstream(transition)
        if upstream is not None:  # joins the upstream's incident, as a known cause would
            known = KnownCause(
                dependency_key(upstream.content_type_id, upstream.object_id),
                f"{upstream.subject_label} (declared dependency)",
            )
    cause, closing = attach_cause(transition, incident, known)
    if upstream is not None and cause is not None:
        Incident.objects.filter(pk=upstream.pk, cause=None).update(cause=cause)
    return enqueue(transition, incident, cause, closing, upstream)


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
        if Notification.objects.filter(
            transition=transition, state=Notification.State.INHIBITED
        ).exists():
            continue  # its cause's incident is the one reminded of
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


def queue_escalations(now: datetime) -> int:
    """The next level of each open, unacknowledged incident whose delay has passed: its
    channels are sent the incident's latest change (kind ``escalation``, sequence = level),
    and the step is in the incident's timeline. Acknowledging stops the climb."""
    queued = 0
    due = Incident.objects.filter(
        closed=None,
        acknowledged=None,
        next_escalation__lte=now,
        escalation_policy__isnull=False,
        region__in=Region.objects.shown(),
    )
    for incident in due.select_related("last_transition"):
        levels = escalation_levels(incident.escalation_policy_id)
        reached = incident.escalation_level
        if reached >= len(levels):
            Incident.objects.filter(pk=incident.pk).update(next_escalation=None)
            continue
        after = reached + 1
        following = (
            incident.opened + timedelta(minutes=levels[after].delay_minutes)
            if after < len(levels)
            else None
        )
        won = Incident.objects.filter(
            pk=incident.pk, escalation_level=reached, closed=None, acknowledged=None
        ).update(escalation_level=after, next_escalation=following)
        if not won:
            continue
        transition = incident.last_transition
        if Notification.objects.filter(
            transition=transition, state=Notification.State.INHIBITED
        ).exists():
            continue  # its cause's incident is the one that climbs
        level = levels[reached]
        channels = [c for c in level.channels.all() if not c.disabled]
        state = (
            Notification.State.SILENCED
            if active_silence(incident, now)
            else Notification.State.PENDING
        )
        for channel in channels:
            _, created = Notification.objects.get_or_create(
                transition=transition,
                channel=channel,
                kind=Notification.Kind.ESCALATION,
                sequence=after,
                defaults={"state": state, "created": now, "next_attempt": now},
            )
            queued += created
        names = ", ".join(c.name for c in channels) or "no channel"
        waited = level.delay_minutes
        IncidentEvent.objects.create(
            incident=incident,
            kind=IncidentEvent.Kind.ESCALATED,
            text=f"Level {after} ({names}): not acknowledged {waited:g} min after it opened"
            + (" (silenced)" if state == Notification.State.SILENCED else ""),
            created=now,
        )
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


def _flap_state(transition: Transition) -> tuple[str, str]:
    """(kind, state) of a change sent late, by the same flap rules as ``enqueue``."""
    if _flapping(transition):
        if _flap_notice_sent_recently(transition):
            return Notification.Kind.TRANSITION, Notification.State.SUPPRESSED
        return Notification.Kind.FLAPPING, Notification.State.PENDING
    return Notification.Kind.TRANSITION, Notification.State.PENDING


def _held(scope: Silence | MaintenanceWindow, opens: datetime, closes: datetime):
    """Open incidents matching ``scope``'s region and concern of which a notification was
    silenced from ``opens`` to ``closes`` (what recovered since is closed, so not here)."""
    silenced = Notification.objects.filter(
        state=Notification.State.SILENCED,
        created__gte=opens,
        created__lte=closes,
        transition__content_type=OuterRef("content_type"),
        transition__object_id=OuterRef("object_id"),
    )
    incidents = Incident.objects.filter(closed=None).filter(Exists(silenced))
    if scope.region_id:
        incidents = incidents.filter(region_id=scope.region_id)
    if scope.concern:
        incidents = incidents.filter(concern=scope.concern)
    if scope.content_type_id:
        incidents = incidents.filter(
            content_type_id=scope.content_type_id, object_id=scope.object_id
        )
    return incidents.select_related("region", "last_transition", "cause")


def held_by(silence: Silence):
    """Open incidents ``silence`` is holding back."""
    return _held(silence, silence.starts, silence.ends)


def _send_late(
    transition: Transition, now: datetime, held: str = Notification.State.SILENCED
) -> int:
    """The ``held`` (silenced, or inhibited) notifications of an incident's latest change,
    handed back to the outbox (one per channel), as if written now: they group with the
    others released now. Still silenced if a silence or window holds it now."""
    rows = Notification.objects.filter(
        transition=transition, kind=Notification.Kind.TRANSITION, sequence=0, state=held
    )
    kind, state = _flap_state(transition)
    if held != Notification.State.SILENCED and active_silence(transition, now):
        state = Notification.State.SILENCED  # a silence's end sends it, as any other
    return rows.update(kind=kind, state=state, created=now, next_attempt=now)


def _release(incidents, now: datetime) -> int:
    """``_send_late`` for each of ``incidents`` shown and not held by another silence (which
    releases it when it ends)."""
    shown = set(Region.objects.shown().values_list("pk", flat=True))
    return sum(
        _send_late(incident.last_transition, now)
        for incident in incidents
        if incident.region_id in shown and not active_silence(incident, now)
    )


def release_silence(silence: Silence, now: datetime) -> int:
    """Once ``silence`` has ended: each incident it held that is still open is sent once."""
    if not Silence.objects.filter(pk=silence.pk, released=None, ends__lte=now).update(released=now):
        return 0  # another worker released it, or it has not ended
    return _release(held_by(silence), now)


def held_by_window(window: MaintenanceWindow, opens: datetime, closes: datetime):
    """Open incidents one occurrence of ``window`` held back (as ``held_by`` for a silence)."""
    return [i for i in _held(window, opens, closes) if window.matches(i)]


def release_windows(now: datetime) -> int:
    """Each maintenance window whose latest occurrence closed and was not released yet: what
    it held that is still open is sent once, as at a silence's end."""
    released = 0
    for window in MaintenanceWindow.objects.filter(enabled=True):
        occurrence = window.schedule.last_closed(now)
        if occurrence is None:
            continue
        opens, closes = occurrence
        if closes <= (window.released_until or window.created):
            continue
        won = MaintenanceWindow.objects.filter(
            pk=window.pk, released_until=window.released_until
        ).update(released_until=closes)
        if not won:
            continue  # another worker released it
        released += _release(held_by_window(window, opens, closes), now)
    return released


def release_ended_silences(now: datetime) -> int:
    """Every silence that ended (or was ended early) and is not released yet."""
    ended = Silence.objects.filter(released=None, ends__lte=now).order_by("ends")
    return sum(release_silence(silence, now) for silence in ended)


def region_turned_on(region_id: int, now: datetime) -> int:
    """A region shown again: each open incident whose latest change was never routed (it
    happened while the region was hidden) is sent once; what recovered meanwhile is closed."""
    if not Region.objects.shown().filter(pk=region_id).exists():
        return 0
    queued = 0
    unrouted = Incident.objects.filter(closed=None, region_id=region_id).exclude(
        Exists(Notification.objects.filter(transition=OuterRef("last_transition")))
    )
    for incident in unrouted.select_related("last_transition"):
        transition = incident.last_transition
        kind, state = _flap_state(transition)
        if active_silence(incident, now):
            state = Notification.State.SILENCED
        for channel in channels_for(transition):
            _, created = Notification.objects.get_or_create(
                transition=transition,
                channel=channel,
                kind=kind,
                sequence=0,
                defaults={"state": state, "created": now, "next_attempt": now},
            )
            queued += created
    return queued


def escalate_undeliverable(now: datetime) -> int:
    """The daily check: what no one received after ``VIGIL_ALERT_UNDELIVERABLE_HOURS`` goes to
    the default rule's other channels (each once), saying where it could not go."""
    cutoff = now - timedelta(hours=settings.VIGIL_ALERT_UNDELIVERABLE_HOURS)
    default = Rule.objects.filter(is_default=True, enabled=True).first()
    if default is None:
        return 0
    fallback = list(default.channels.filter(disabled=False))
    stuck = (
        Notification.objects.filter(
            state__in=[Notification.State.PENDING, Notification.State.FAILED],
            escalated=None,
            created__lte=cutoff,
            created__gt=cutoff - timedelta(days=2),  # a daily check, with a day to spare
        )
        .exclude(kind=Notification.Kind.UNDELIVERABLE)
        .select_related("transition", "channel")
    )
    queued = 0
    for notification in stuck:
        others = [c for c in fallback if c.pk != notification.channel_id]
        if not others:
            continue  # nowhere else to go: it stays listed on its channel's page
        won = Notification.objects.filter(pk=notification.pk, escalated=None).update(escalated=now)
        if not won:
            continue
        for channel in others:
            _, created = Notification.objects.get_or_create(
                transition=notification.transition,
                channel=channel,
                kind=Notification.Kind.UNDELIVERABLE,
                sequence=0,
                defaults={"created": now, "next_attempt": now},
            )
            queued += created
    return queued

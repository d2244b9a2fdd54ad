"""Notifications as events: the JSON the webhook sends (its documented schema, version 1), and
what Slack and PagerDuty messages are made from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.conf import settings

from apps.alerts import content
from apps.alerts.models import Incident, Notification, Transition
from apps.alerts.routing import told_alone

SCHEMA_VERSION = 1


def subject_key(transition: Transition) -> str:
    """A subject's stable name across its transitions: ``vigil/efs.filesystem/42``.

    PagerDuty's ``dedup_key``, so an incident opens and closes in PagerDuty with Vigil's."""
    ct = transition.content_type
    return f"vigil/{ct.app_label}.{ct.model}/{transition.object_id}"


def cause_key(transition: Transition) -> str:
    """PagerDuty's ``dedup_key``: the cause's when the subject failed for a known one (one
    PagerDuty incident for a storage server's five arrays), else the subject's."""
    if transition.cause_id:
        return f"vigil/cause/{transition.cause.key}"
    return subject_key(transition)


def also_resolves(notification: Notification) -> list[str]:
    """The subject's own key, when ``notification`` is a recovery that closes its cause and
    its channel was also told of the subject alone in the incident it closes (a change that
    was not the cause's: PagerDuty opened an incident under the subject's key then, which the
    cause's resolve would leave open); else nothing."""
    t = notification.transition
    if t.new_status != "ok" or not t.cause_id:
        return []
    incident = Incident.objects.filter(last_transition=t).first()
    if incident is None or notification.channel_id not in told_alone(incident):
        return []
    return [subject_key(t)]


def cause(transition: Transition) -> dict[str, Any] | None:
    """The incident by cause, in the webhook's events: the subjects failing for it."""
    if not transition.cause_id:
        return None
    c = transition.cause
    return {
        "key": c.key,
        "label": c.label,
        "status": c.status,
        "closed": c.closed.isoformat() if c.closed else None,
        "url": settings.VIGIL_BASE_URL.rstrip("/") + c.get_absolute_url(),
        "subjects": [
            {"label": m.subject_label, "status": m.status, "open": m.closed is None}
            for m in c.members()
        ],
    }


def event_id(notification: Notification) -> str:
    """The same for every attempt at the same notification: receivers drop repeats by it (a
    channel's test message, kept nowhere, is named by when it was sent)."""
    if notification.kind == Notification.Kind.TEST:
        return f"vigil-test-{notification.channel_id}-{notification.created.timestamp():.6f}"
    return f"vigil-notification-{notification.pk}"


def event(notification: Notification) -> dict[str, Any]:
    t = notification.transition
    item = content.item(t, kind=notification.kind)
    return {
        "id": event_id(notification),
        "kind": notification.kind,
        "reminder": notification.sequence or None,
        "subject": {
            "key": subject_key(t),
            "label": t.subject_label,
            "concern": t.concern,
            "concern_label": item["concern"],
            "region": item["region"],
            "url": item["url"],
        },
        "status": t.new_status,
        "old_status": t.old_status,
        "word": item["word"],
        "summary": content.summary_line(t, notification.kind),
        "reason": t.reason,
        "figures": t.figures,
        "changed_at": t.created.isoformat(),
        "transition_id": t.pk,
        "cause": cause(t),
    }


def latest_per_subject(notifications: Sequence[Notification]) -> list[Notification]:
    """One notification per subject, its latest change, in the order subjects first changed."""
    by_subject: dict[tuple[int, int], Notification] = {}
    for n in sorted(notifications, key=lambda n: (n.transition.created, n.transition.pk)):
        by_subject[(n.transition.content_type_id, n.transition.object_id)] = n
    return list(by_subject.values())

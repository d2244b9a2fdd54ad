"""What an alert email says: built from its notifications, whatever concern they come from."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.urls import reverse

from apps.regions import concerns

from .models import Notification, Transition

WORDS = {"ok": "RECOVERED", "warning": "WARNING", "critical": "CRITICAL", "unknown": "UNKNOWN"}


def concern_label(key: str) -> str:
    return next((c.label for c in concerns.registered() if c.key == key), key.upper())


def subject_url(transition: Transition) -> str:
    """The subject's page, or its region's when the subject (or its concern) is gone."""
    model = transition.content_type.model_class()
    subject = model._default_manager.filter(pk=transition.object_id).first() if model else None
    path = ""
    if subject is not None and hasattr(subject, "get_absolute_url"):
        path = subject.get_absolute_url()
    if not path:
        path = reverse("regions:detail", args=[transition.region_id])
    return settings.VIGIL_BASE_URL.rstrip("/") + path


def headline(transition: Transition) -> str:
    """The reason's first clause: what fits in a phone's subject line."""
    return transition.reason.split(";")[0].strip()


def figures(transition: Transition) -> list[tuple[str, str]]:
    out = []
    for key, value in transition.figures.items():
        if value is None or value == "" or value == []:
            continue
        if isinstance(value, float):
            value = f"{value:,.2f}".rstrip("0").rstrip(".")
        elif isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        out.append((key.replace("_", " "), str(value)))
    return out


def item(transition: Transition, earliest: Transition | None = None, changes: int = 1):
    """One subject in an email: its latest transition, and how it got there since ``earliest``."""
    return {
        "transition": transition,
        "word": WORDS.get(transition.new_status, transition.new_status.upper()),
        "concern": concern_label(transition.concern),
        "region": transition.region.code,
        "label": transition.subject_label,
        "headline": headline(transition),
        "figures": figures(transition),
        "url": subject_url(transition),
        "was": (earliest or transition).old_status,
        "changes": changes,
    }


def _flap_changes(t: Transition) -> int:
    return Transition.objects.filter(
        content_type=t.content_type,
        object_id=t.object_id,
        created__gte=t.created - timedelta(minutes=settings.VIGIL_ALERT_FLAP_MINUTES),
    ).count()


def context(notifications: Sequence[Notification]) -> dict[str, Any]:
    """What the templates need; a subject with several changes in one email is listed once."""
    first = notifications[0]
    by_subject: dict[tuple[int, str], list[Transition]] = {}
    for n in sorted(notifications, key=lambda n: (n.transition.created, n.transition.pk)):
        t = n.transition
        by_subject.setdefault((t.content_type_id, t.object_id), []).append(t)
    items = [item(ts[-1], ts[0], len(ts)) for ts in by_subject.values()]
    flap_minutes = settings.VIGIL_ALERT_FLAP_MINUTES
    changes = 0
    if first.kind == Notification.Kind.FLAPPING:
        for i in items:
            i["flap_changes"] = _flap_changes(i["transition"])
        changes = items[0]["flap_changes"]
    return {
        "kind": first.kind,
        "items": items,
        "first": items[0],
        "grouped": len(items) > 1,
        "reminder_number": first.sequence,
        "flap_changes": changes,
        "flap_minutes": flap_minutes,
        "settle_minutes": settings.VIGIL_ALERT_SETTLE_MINUTES,
        "base_url": settings.VIGIL_BASE_URL.rstrip("/"),
    }

"""What an alert email says: built from its notifications, whatever concern they come from.

A transition's reason and label may hold text a host or node pushed (a Galera node's state
comment): ``plain`` makes it one line of printable text for every channel's one-line fields
(a subject line, PagerDuty's summary); each channel escapes it for its own markup on top (HTML
by the templates, Slack's mrkdwn in its transport).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.template.loader import render_to_string
from django.urls import reverse

from apps.lib.formats import iec_bytes, number
from apps.regions import concerns

from .models import Notification, Transition

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")

WORDS = {"ok": "RECOVERED", "warning": "WARNING", "critical": "CRITICAL", "unknown": "UNKNOWN"}


def concern_label(key: str) -> str:
    return concerns.label_of(key)


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


def plain(text: str) -> str:
    """``text`` on one line: control characters (line breaks, escapes) become one space."""
    return _CONTROL.sub(" ", text).strip()


def cause_of(transition: Transition):
    """The incident by cause the transition belongs to (None for a subject alone)."""
    return transition.cause if transition.cause_id else None


def label(transition: Transition) -> str:
    """What failed: the subject, or the cause it failed for ("storage server storage-b"), on
    one line."""
    cause = cause_of(transition)
    return plain(cause.label if cause is not None else transition.subject_label)


def headline(transition: Transition) -> str:
    """The reason's first clause: what fits in a phone's subject line; for a cause, the
    subjects failing for it ("5 arrays: db:md1, db:md2, …")."""
    cause = cause_of(transition)
    if cause is not None:
        return plain(cause.summary())
    return plain(transition.reason.split(";")[0])


def word(transition: Transition, kind: str = "") -> str:
    """RECOVERED, WARNING, CRITICAL, UNKNOWN; TEST for a channel's test message."""
    if kind == Notification.Kind.TEST:
        return "TEST"
    return WORDS.get(transition.new_status, transition.new_status.upper())


def summary_line(transition: Transition, kind: str = "") -> str:
    """``CRITICAL eu-central-1 Galera prod-db: quorum lost``: one change on one line."""
    if kind == Notification.Kind.TEST:
        return f"TEST Vigil channel {plain(transition.subject_label)}: {headline(transition)}"
    return (
        f"{word(transition)} {transition.region.code} {concern_label(transition.concern)} "
        f"{label(transition)}: {headline(transition)}"
    )


#: One short subject template per kind of email (``emails/<name>-subject.txt``, named as
#: ``apps/lib/emails.py`` names an email's own).
SUBJECTS = (
    "alert",
    "recovery",
    "reminder",
    "flapping",
    "grouped",
    "undeliverable",
    "test",
    "escalation",
)


def subject_name(kind: str, grouped: bool, new_status: str) -> str:
    """Which subject template an email uses."""
    if kind == Notification.Kind.TEST:
        return "test"
    if kind == Notification.Kind.UNDELIVERABLE:
        return "undeliverable"
    if kind == Notification.Kind.ESCALATION:
        return "escalation"
    if grouped:
        return "grouped"
    if kind in (Notification.Kind.REMINDER, Notification.Kind.FLAPPING):
        return str(kind)
    return "recovery" if new_status == "ok" else "alert"


# A figure's unit is the suffix of its key (the status contract's naming, docs/architecture.md):
# the label drops it and the value is written in it.
_UNITS: tuple[tuple[str, Any], ...] = (
    ("_bytes", iec_bytes),
    ("_mibps", lambda v: f"{number(v)} MiB/s"),
    ("_pct", lambda v: f"{v:.0f} %"),
    ("_s", lambda v: f"{number(v)} s"),
    ("_hours", lambda v: f"{number(v)} h"),
)


def figure(key: str, value: object) -> tuple[str, str]:
    """One figure as (label, text) for a person: units from the key's suffix."""
    if key.startswith("hours_") and isinstance(value, int | float):
        return key.removeprefix("hours_").replace("_", " "), f"{number(value)} h"
    if isinstance(value, int | float) and not isinstance(value, bool):
        for suffix, write in _UNITS:
            if key.endswith(suffix):
                return key.removesuffix(suffix).replace("_", " "), write(value)
        return key.replace("_", " "), number(value)
    if key.endswith("_at") and isinstance(value, str):
        try:
            when = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            if when.tzinfo is not None:
                when = when.astimezone(UTC)
            return key.replace("_", " "), when.strftime("%Y-%m-%d %H:%M UTC")
    if isinstance(value, list):
        value = ", ".join(str(v) for v in value)
    return key.replace("_", " "), str(value)


def figures(transition: Transition) -> list[tuple[str, str]]:
    return [
        figure(key, value)
        for key, value in transition.figures.items()
        if value is not None and value != "" and value != []
    ]


# The bar beside each subject in the HTML email: red for critical, green for ok, amber otherwise.
BAR_COLOURS = {"critical": "#cf222e", "ok": "#1a7f37"}


def item(
    transition: Transition, earliest: Transition | None = None, changes: int = 1, kind: str = ""
):
    """One subject in an email: its latest transition, and how it got there since ``earliest``."""
    return {
        "transition": transition,
        "word": word(transition, kind),
        "colour": BAR_COLOURS.get(transition.new_status, "#9a6700"),
        "concern": concern_label(transition.concern),
        "region": transition.region.code,
        "label": label(transition) if kind != Notification.Kind.TEST else transition.subject_label,
        "headline": headline(transition),
        "cause": cause_of(transition),
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
    by_subject: dict[tuple[int, int], list[Transition]] = {}
    for n in sorted(notifications, key=lambda n: (n.transition.created, n.transition.pk)):
        t = n.transition
        by_subject.setdefault((t.content_type_id, t.object_id), []).append(t)
    items = [item(ts[-1], ts[0], len(ts), first.kind) for ts in by_subject.values()]
    flap_minutes = settings.VIGIL_ALERT_FLAP_MINUTES
    changes = 0
    if first.kind == Notification.Kind.FLAPPING:
        for i in items:
            i["flap_changes"] = _flap_changes(i["transition"])
        changes = items[0]["flap_changes"]
    ctx = {
        "kind": first.kind,
        "items": items,
        "first": items[0],
        "grouped": len(items) > 1,
        "reminder_number": first.sequence,
        "flap_changes": changes,
        "flap_minutes": flap_minutes,
        "settle_minutes": settings.VIGIL_ALERT_SETTLE_MINUTES,
        "base_url": settings.VIGIL_BASE_URL.rstrip("/"),
        "undeliverable_channel": _undelivered_channel(first),
    }
    name = subject_name(first.kind, ctx["grouped"], items[0]["transition"].new_status)
    ctx["subject"] = " ".join(render_to_string(f"emails/{name}-subject.txt", ctx).split())
    return ctx


def _undelivered_channel(notification: Notification) -> str:
    """For an undeliverable notice: the channel the alert could not reach."""
    if notification.kind != Notification.Kind.UNDELIVERABLE:
        return ""
    original = (
        Notification.objects.filter(transition=notification.transition, escalated__isnull=False)
        .exclude(kind=Notification.Kind.UNDELIVERABLE)
        .select_related("channel")
        .first()
    )
    return original.channel.name if original else "another channel"

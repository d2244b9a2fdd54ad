"""Times as a viewer reads them: in their time zone, with the UTC time on hover.

``{% when dt %}`` renders ``<time datetime="…Z" title="… UTC">local time</time>``; ``{% ago dt %}``
renders "3 min ago" the same way, for where recency matters. The zone is the one
``apps.accounts.middleware.TimezoneMiddleware`` activated (the user's setting, else the
browser's, else UTC).
"""

from __future__ import annotations

from datetime import UTC, datetime

from django import template
from django.utils import timezone
from django.utils.dateformat import format as date_format
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


def _utc(value: datetime) -> datetime:
    return value.astimezone(UTC) if timezone.is_aware(value) else value.replace(tzinfo=UTC)


def ago_text(value: datetime, now: datetime) -> str:
    """'just now', '3 min ago', '2 h ago', '4 days ago' (or 'in 5 min' for the future)."""
    seconds = (now - value).total_seconds()
    future = seconds < 0
    seconds = abs(seconds)
    if seconds < 45:
        return "just now"
    if seconds < 3600:
        text = f"{round(seconds / 60)} min"
    elif seconds < 2 * 86400:
        text = f"{round(seconds / 3600)} h"
    else:
        text = f"{round(seconds / 86400)} days"
    return f"in {text}" if future else f"{text} ago"


def _time(utc: datetime, title: str, text: str) -> SafeString:
    return format_html(
        '<time datetime="{}" title="{}">{}</time>', utc.strftime("%Y-%m-%dT%H:%M:%SZ"), title, text
    )


def _minute(d: datetime) -> str:
    """``date_format(d, "Y-m-d H:i")`` without its formatter (a region page has hundreds)."""
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d} {d.hour:02d}:{d.minute:02d}"


#: The formats pages use most, written directly; any other goes through ``date_format``.
_FAST = {
    "Y-m-d H:i": _minute,
    "H:i": lambda d: f"{d.hour:02d}:{d.minute:02d}",
    "Y-m-d": lambda d: f"{d.year:04d}-{d.month:02d}-{d.day:02d}",
}


@register.simple_tag
def when(value: datetime | None, fmt: str = "Y-m-d H:i") -> SafeString | str:
    if value is None:
        return ""
    utc = _utc(value)
    fast = _FAST.get(fmt)
    if fast is None:
        return _time(utc, f"{utc:%Y-%m-%d %H:%M:%S} UTC", date_format(timezone.localtime(utc), fmt))
    # Digits and dashes only: nothing to escape.
    return mark_safe(
        f'<time datetime="{utc:%Y-%m-%dT%H:%M:%SZ}" title="{utc:%Y-%m-%d %H:%M:%S} UTC">'
        f"{fast(timezone.localtime(utc))}</time>"
    )


@register.simple_tag
def ago(value: datetime | None) -> SafeString | str:
    if value is None:
        return ""
    utc = _utc(value)
    local = timezone.localtime(utc)
    # date_format(local, "Y-m-d H:i T") without its formatter ("T": the zone's abbreviation)
    shown = f"{_minute(local)} {local.tzinfo.tzname(local)}"
    return _time(utc, f"{shown} ({utc:%Y-%m-%d %H:%M} UTC)", ago_text(utc, timezone.now()))

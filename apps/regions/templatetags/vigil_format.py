"""Figures as every page shows them: ``{% figure value decimals unit %}``, and sizes, speeds and
durations through apps/lib/formats.py (``|kib``, ``|kib_per_s``, ``|minutes``, ``|interval``).

A figure that is not known (None) is a muted dash, the same everywhere; a known one goes
through Django's ``floatformat`` (``decimals`` as that filter takes it: 0, 1, "-1"...) with its
unit after a space.
"""

from __future__ import annotations

from django import template
from django.template.defaultfilters import floatformat
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from apps.lib import formats

register = template.Library()

MISSING = mark_safe('<span class="muted">–</span>')


@register.simple_tag
def figure(value: object, decimals: int | str = "-1", unit: str = "") -> SafeString:
    """``12 %``, ``1.5 GiB``, ``3``; or a muted dash for a figure not known yet."""
    if value is None:
        return MISSING
    text = floatformat(value, decimals)
    return format_html("{} {}", text, unit) if unit else format_html("{}", text)


# Sizes, speeds and durations (apps/lib/formats.py); a value not known is a dash.


@register.filter
def kib(value: float | None) -> str:
    """1073741824 (KiB) -> "1.0 TiB"."""
    return "—" if value is None else formats.kib(value)


@register.filter
def kib_per_s(value: int | None) -> str:
    """148213 -> "144.7 MiB/s"."""
    return "—" if value is None else formats.kib_per_s(value)


@register.filter
def minutes(value: float | None) -> str:
    """75.5 -> "1 h 16 min"."""
    return "—" if value is None else formats.duration(value, decimals=1)


@register.filter
def interval(value: float | None) -> str:
    """62 (seconds) -> "62 s", 300 -> "5 min"."""
    return formats.interval(value) if isinstance(value, int | float) else "—"

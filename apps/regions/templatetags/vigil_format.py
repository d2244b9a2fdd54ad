"""Figures as every page shows them: ``{% figure value decimals unit %}``, and sizes, speeds and
durations through apps/lib/formats.py (``|kib``, ``|kib_per_s``, ``|minutes``, ``|interval``);
``|badge``, a status as ``status_badge.html`` shows it, for tables of many rows.

A figure that is not known (None) is a muted dash, the same everywhere; a known one goes
as Django's ``floatformat`` writes it (``decimals`` as that filter takes it: 0, 1, "-1"...) with its
unit after a space.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from django import template
from django.conf import settings
from django.template.defaultfilters import floatformat
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import capfirst

from apps.lib import formats

register = template.Library()

MISSING = mark_safe('<span class="muted">–</span>')


@register.simple_tag
def figure(value: object, decimals: int | str = "-1", unit: str = "") -> SafeString:
    """``12 %``, ``1.5 GiB``, ``3``; or a muted dash for a figure not known yet."""
    if value is None:
        return MISSING
    text = number(value, decimals)
    return format_html("{} {}", text, unit) if unit else format_html("{}", text)


#: The largest magnitude ``number`` rounds itself (a float's digits all before the point).
_PLAIN = 1e15


def number(value: object, decimals: int | str = "-1") -> str:
    """``floatformat(value, decimals)`` as Django writes it, without its localisation, for a
    plain number and whole ``decimals`` when no thousands separator is set (the region page's
    panels show a thousand figures: each through ``floatformat`` cost as much as a row).

    The same rounding: the shortest decimal of the float, half away from zero; with
    ``decimals`` <= 0 a whole number has no point, otherwise ``|decimals|`` places."""
    places = decimals if isinstance(decimals, int) else _whole(decimals)
    if (
        places is None
        or type(value) not in (int, float)
        or not -_PLAIN < value < _PLAIN
        or settings.USE_THOUSAND_SEPARATOR
    ):
        return floatformat(value, decimals)
    exact = Decimal(repr(value))
    if places <= 0 and exact == exact.to_integral_value():
        return str(int(exact))
    rounded = exact.quantize(_STEPS[abs(places)], ROUND_HALF_UP) if abs(places) < 10 else None
    if rounded is None:
        return floatformat(value, decimals)
    return format(rounded if rounded else abs(rounded), "f")  # no "-0.0"


def _whole(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:  # "0g", "2u": grouping or not localised, Django's own way
        return None


_STEPS = [Decimal(1).scaleb(-p) for p in range(10)]


@register.filter
def badge(status: object) -> SafeString:
    """``status_badge.html``'s badge without an include per row (a region page's panels show a
    hundred: each include cost as much as the rest of its row); the same markup, its test says."""
    if not status:
        return mark_safe('<span class="badge badge-none">Not monitored</span>')
    return format_html(
        '<span class="badge badge-{}"><span class="badge-icon" aria-hidden="true"></span>{}</span>',
        status,
        capfirst(str(status)),
    )


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

"""Figures as every page shows them: ``{% figure value decimals unit %}``.

A figure that is not known (None) is a muted dash, the same everywhere; a known one goes
through Django's ``floatformat`` (``decimals`` as that filter takes it: 0, 1, "-1"...) with its
unit after a space.
"""

from __future__ import annotations

from django import template
from django.template.defaultfilters import floatformat
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

MISSING = mark_safe('<span class="muted">–</span>')


@register.simple_tag
def figure(value: object, decimals: int | str = "-1", unit: str = "") -> SafeString:
    """``12 %``, ``1.5 GiB``, ``3``; or a muted dash for a figure not known yet."""
    if value is None:
        return MISSING
    text = floatformat(value, decimals)
    return format_html("{} {}", text, unit) if unit else format_html("{}", text)

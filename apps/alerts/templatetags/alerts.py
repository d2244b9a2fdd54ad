from __future__ import annotations

from django import template

from apps.alerts.content import concern_label as label_for

register = template.Library()


@register.filter
def concern_label(key: str) -> str:
    """``{{ incident.concern|concern_label }}``: "efs" → "EFS", as the concern registered it."""
    return label_for(key)

"""``{% asides obj %}``: what other concerns know of a subject page's object (its EC2 volumes
on a Galera cluster's page, say), each concern's ``aside_template`` with its
``aside_context(obj)`` as ``aside`` (apps/regions/concerns.py, "where concerns meet")."""

from __future__ import annotations

from typing import Any

from django import template
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from apps.regions import concerns

register = template.Library()


@register.simple_tag(takes_context=True)
def asides(context: template.Context, obj: Any) -> SafeString:
    request = context.get("request")
    # Each part is a template rendered with autoescape.
    return mark_safe(
        "".join(
            render_to_string(name, {"aside": found, "obj": obj}, request=request)
            for name, found in concerns.asides(obj)
        )
    )

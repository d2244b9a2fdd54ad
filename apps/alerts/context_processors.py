"""Admins see, on every page, each channel that Vigil's own configuration keeps from sending."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from apps.lib.status import worst

from .models import Channel, Incident


def delivery_problems(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not user.has_perm("alerts.change_channel"):
        return {}

    def channels() -> list:
        return list(Channel.objects.exclude(config_error="").only("pk", "name", "config_error"))

    return {"alert_config_errors": channels}  # called by the template only


def alarm(request: HttpRequest) -> dict[str, Any]:
    """The open incidents' worst status (the favicon) and how many are critical (the title),
    read when a page's template first asks for them (one query)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    from django.utils.functional import SimpleLazyObject

    def read() -> dict[str, Any]:
        from django.db.models import Count

        counts = dict(
            Incident.objects.filter(closed=None)
            .values_list("status")
            .annotate(n=Count("pk"))
            .order_by()
        )
        status = worst(counts) or "ok"
        return {
            "worst": str(status),
            "critical": counts.get("critical", 0),
            "icon": f"img/favicon-{status}.svg",
        }

    return {"alarm": SimpleLazyObject(read)}

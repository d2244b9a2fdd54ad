"""The viewer's time zone: their own setting, else their browser's (a cookie set by vigil.js),
else UTC. Times are stored in UTC; pages show them in this zone with UTC on hover
(``apps.regions.templatetags.vigil_time``)."""

from __future__ import annotations

import zoneinfo
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from .models import Preference

COOKIE = "vigil_tz"


@lru_cache(maxsize=512)
def zone(name: str) -> zoneinfo.ZoneInfo | None:
    """The IANA zone called ``name``, or None for anything else (the cookie is bounded)."""
    if not name or len(name) > 64 or name.startswith(("/", ".")) or ".." in name:
        return None
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None


def viewer_zone(request: HttpRequest) -> zoneinfo.ZoneInfo | None:
    chosen = zone(Preference.of_request(request)[1])
    if chosen is not None:
        return chosen
    return zone(unquote(request.COOKIES.get(COOKIE, "")[:200]))


class TimezoneMiddleware:
    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        found = viewer_zone(request)
        if found is None:
            timezone.deactivate()
        else:
            timezone.activate(found)
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()

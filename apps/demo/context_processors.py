from __future__ import annotations

from django.http import HttpRequest

from .mode import demo_enabled


def demo(request: HttpRequest) -> dict[str, bool]:
    return {"demo_mode": demo_enabled()}

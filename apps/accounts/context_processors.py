"""Template context: the user's role, and whether the admin site opens to them."""

from __future__ import annotations

from django.http import HttpRequest

from .models import Preference
from .preferences import NEXT_THEME
from .roles import can_use_admin_site, role_of


def roles(request: HttpRequest) -> dict[str, object]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}

    theme, _ = Preference.of_request(request)
    return {
        "role": role_of(user),
        "can_use_admin": can_use_admin_site(user),
        "theme": theme,
        "next_theme": NEXT_THEME.get(theme, "auto"),
    }

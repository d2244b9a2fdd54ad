"""Login required for every page; API views authenticate themselves (API key or session).

Also two-factor where ``VIGIL_MFA_REQUIRED`` asks for it (``TwoFactorRequiredMiddleware``).
"""

from __future__ import annotations

from typing import Any

from allauth.mfa.utils import is_mfa_enabled
from django.conf import settings
from django.contrib.auth import middleware
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from rest_framework.views import APIView

from .remote import METHOD_KEY, OIDC
from .roles import ADMIN, role_of
from .views import healthz


class LoginRequiredMiddleware(middleware.LoginRequiredMiddleware):
    """Django's middleware, except for DRF views, which answer 401 JSON instead of a redirect."""

    def process_view(
        self, request: HttpRequest, view_func: Any, view_args: Any, view_kwargs: Any
    ) -> HttpResponse | None:
        view_class = getattr(view_func, "cls", None)
        if isinstance(view_class, type) and issubclass(view_class, APIView):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)


class HealthzMiddleware:
    """Answer ``/healthz`` first, before host validation and HTTPS redirects.

    Docker and load balancers probe the container by its own address (127.0.0.1:8000), which
    ``ALLOWED_HOSTS`` rightly rejects in production; the probe must not depend on it.
    """

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info == "/healthz":
            return healthz(request)
        return self.get_response(request)


class TwoFactorRequiredMiddleware:
    """``VIGIL_MFA_REQUIRED``: an admin (``admins``) or anyone (``everyone``) signed in with a
    password (Vigil's or the directory's) and without two-factor gets only the pages that set
    it up and sign-out; every other page answers 403 with a link to set it up, the API 403
    JSON. A provider's sign-in is left to the provider's own second factor."""

    ALLOWED_PREFIXES = ("/accounts/2fa/", "/accounts/logout/", "/accounts/reauthenticate/")

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if self.refused(request):
            if request.path_info.startswith("/api/"):
                return JsonResponse({"error": TWO_FACTOR_REFUSAL}, status=403)
            return render(request, "account/two_factor_required.html", status=403)
        return self.get_response(request)

    def refused(self, request: HttpRequest) -> bool:
        required = settings.VIGIL_MFA_REQUIRED
        user = getattr(request, "user", None)
        if required == "none" or user is None or not user.is_authenticated:
            return False
        if request.path_info.startswith(self.ALLOWED_PREFIXES):
            return False
        if required == "admins" and role_of(user) != ADMIN:
            return False
        if request.session.get(METHOD_KEY) == OIDC:
            return False
        return not is_mfa_enabled(user)


TWO_FACTOR_REFUSAL = (
    "Two-factor sign-in is required for your role (VIGIL_MFA_REQUIRED): set it up first, at "
    "/accounts/2fa/"
)

"""Login required for every page; API views authenticate themselves (API key or session).

Also the client's address as django-axes counts failed logins by it (``client_ip``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import middleware
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from rest_framework.views import APIView


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
            from .views import healthz

            return healthz(request)
        return self.get_response(request)


def client_ip(request: HttpRequest) -> str:
    """The client's address, for login lockouts: the peer, or what the outermost proxy saw.

    With ``VIGIL_PROXY_COUNT`` proxies in front, each appends the address it received from to
    ``X-Forwarded-For``, so the client is the count-th entry from the right; entries further
    left were sent by the client and cannot be trusted (anyone could dodge a lockout by
    sending a new one each time). A header shorter than the count falls back to the peer.
    """
    count = settings.VIGIL_PROXY_COUNT
    peer = request.META.get("REMOTE_ADDR", "")
    if count <= 0:
        return peer
    forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [a for a in forwarded if a]
    return forwarded[-count] if len(forwarded) >= count else peer


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None, credentials: dict | None
) -> HttpResponse:
    """django-axes' answer to a locked-out login: a page saying how long to wait, 429."""
    minutes = max(1, round(settings.AXES_COOLOFF_TIME.total_seconds() / 60))
    context = {
        "username": (credentials or {}).get("username") or request.POST.get("username", ""),
        "failure_limit": settings.AXES_FAILURE_LIMIT,
        "minutes": minutes,
    }
    response = render(request, "registration/locked_out.html", context, status=429)
    response["Retry-After"] = str(minutes * 60)
    return response

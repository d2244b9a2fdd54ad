"""Login required for every page; API views authenticate themselves (API key or session)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import middleware
from django.http import HttpRequest, HttpResponse
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

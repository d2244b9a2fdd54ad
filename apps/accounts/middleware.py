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

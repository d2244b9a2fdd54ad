"""Errors as JSON ``{"error": "..."}`` for the API, as healthchecks answers its scripts."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import exception_handler

from apps.lib.keep import HistoryKept


class ErrorSerializer(serializers.Serializer):
    """The shape of every API error, for the schema (``apps.api.schema``)."""

    error = serializers.CharField(help_text="What went wrong, for a person to read.")
    fields = serializers.DictField(
        required=False, help_text="Invalid input: the message(s) for each field."
    )
    line = serializers.IntegerField(required=False, help_text="A report's unreadable line.")


def json_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, HistoryKept):  # apps.lib.keep: deleting it would lose history
        return Response({"error": str(exc)}, status=409)
    response = exception_handler(exc, context)
    if response is None:
        return None
    data = response.data
    if isinstance(data, dict) and set(data) == {"detail"}:
        response.data = {"error": str(data["detail"])}
    else:
        response.data = {"error": "Invalid input", "fields": data}
    return response


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A refusal says why: JSON for the API, else the app's own page (templates/403.html),
    with its navigation and the reason (``apps.accounts.roles.refuse_unless``'s words)."""
    if _is_api(request):
        return JsonResponse({"error": str(exception) or "Forbidden"}, status=403)
    return defaults.permission_denied(request, exception)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"error": "Not found (the API's paths: /api/docs/)"}, status=404)
    return defaults.page_not_found(request, exception)


class JsonNotFound:
    """Middleware: an unknown path under /api/ answers JSON 404 also with ``DEBUG`` on (where
    Django answers its 40 KB debug page listing every URL), as ``not_found`` does without it."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            response.status_code == 404
            and _is_api(request)
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            return JsonResponse({"error": "Not found (the API's paths: /api/docs/)"}, status=404)
        return response


def server_error(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"error": "Server error"}, status=500)
    return defaults.server_error(request)

"""DRF authentication by API key: ``Authorization: Bearer <key>`` or ``X-Api-Key: <key>``."""

from __future__ import annotations

from rest_framework import authentication, exceptions
from rest_framework.request import Request

from . import keycache
from .audit import attribute_to
from .models import ApiKey


def confirm_kept_key(request: Request, view: object, *, holds: bool) -> None:
    """A key this request took from the process's memory: kept when its shared entry
    ``holds``, else forgotten here and the request authenticated and its role checked again
    (from the shared cache or the table: a revoked key raises 401, a changed role applies)."""
    lookup = getattr(request, "_vigil_key_here", None)
    if not lookup:
        return
    request._vigil_key_here = None
    if holds:
        return
    keycache.drop_here(lookup)
    request._authenticate()
    view.check_permissions(request)  # type: ignore[attr-defined]


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[object, ApiKey] | None:
        raw = request.headers.get("X-Api-Key", "").strip()
        if not raw:
            parts = request.headers.get("Authorization", "").split()
            if not parts or parts[0].lower() != self.keyword.lower():
                return None
            if len(parts) != 2:
                raise exceptions.AuthenticationFailed("Malformed Authorization header")
            raw = parts[1]
        # A key kept in this process's memory only when the view's rate limits check the
        # shared entry before anything else (``checks_kept_keys``: apps.api.throttling).
        view = (getattr(request, "parser_context", None) or {}).get("view")  # /metrics: none
        checked = view is not None and any(
            getattr(throttle, "checks_kept_keys", False) for throttle in view.get_throttles()
        )
        key, from_here = ApiKey.find(raw, here=checked)
        if key is None:
            request._vigil_key_here = None
            raise exceptions.AuthenticationFailed("Invalid or revoked API key")
        request._vigil_key_here = key.lookup if from_here else None
        key.touch()
        attribute_to(key.user, via=f"API key {key.display_prefix}…")
        return key.user, key

    def authenticate_header(self, request: Request) -> str:
        return self.keyword

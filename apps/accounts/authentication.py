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


KEYWORD = "Bearer"


def raw_key(meta: dict) -> str | None:
    """The key a request sends (``X-Api-Key`` first, else ``Authorization: Bearer``), or None;
    a malformed ``Authorization`` raises ``AuthenticationFailed``."""
    raw = meta.get("HTTP_X_API_KEY", "").strip()
    if raw:
        return raw
    parts = meta.get("HTTP_AUTHORIZATION", "").split()
    if not parts or parts[0].lower() != KEYWORD.lower():
        return None
    if len(parts) != 2:
        raise exceptions.AuthenticationFailed("Malformed Authorization header")
    return parts[1]


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = KEYWORD

    def authenticate(self, request: Request) -> tuple[object, ApiKey] | None:
        raw = raw_key(request.META)
        if raw is None:
            return None
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

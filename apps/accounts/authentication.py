"""DRF authentication by API key: ``Authorization: Bearer <key>`` or ``X-Api-Key: <key>``."""

from __future__ import annotations

from rest_framework import authentication, exceptions
from rest_framework.request import Request

from .audit import attribute_to
from .models import ApiKey


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
        key = ApiKey.for_raw_key(raw)
        if key is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked API key")
        key.touch()
        attribute_to(key.user, via=f"API key {key.display_prefix}…")
        return key.user, key

    def authenticate_header(self, request: Request) -> str:
        return self.keyword

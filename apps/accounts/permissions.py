"""Who may do what through the API: read-only keys may only read."""

from __future__ import annotations

from rest_framework import permissions
from rest_framework.request import Request

from .models import ApiKey


class ApiKeyScope(permissions.IsAuthenticated):
    message = "This API key is read-only"

    def has_permission(self, request: Request, view: object) -> bool:
        if not super().has_permission(request, view):
            self.message = "Authentication required: send an API key as 'Authorization: Bearer …'"
            return False
        if isinstance(request.auth, ApiKey) and request.auth.read_only:
            self.message = "This API key is read-only"
            return request.method in permissions.SAFE_METHODS
        return True

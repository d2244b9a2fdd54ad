"""Who may do what through the API: the caller's role, and read-only keys may only read.

``RolePermissions`` is every view's default (``REST_FRAMEWORK["DEFAULT_PERMISSION_CLASSES"]``),
so a new viewset is protected the day it is added. A key carries its owner's role as it is when
the key is used: demoting a user demotes their keys at once.
"""

from __future__ import annotations

from typing import Any

from rest_framework import permissions
from rest_framework.request import Request

from . import keycache
from .models import ApiKey
from .roles import role_of

METHOD_ACTIONS = {"POST": "add", "PUT": "change", "PATCH": "change", "DELETE": "delete"}


class ApiKeyScope(permissions.IsAuthenticated):
    """A login or an API key; a read-only key only reads."""

    message = "This API key is read-only"

    def has_permission(self, request: Request, view: object) -> bool:
        if not super().has_permission(request, view):
            self.message = "Authentication required: send an API key as 'Authorization: Bearer …'"
            return False
        if isinstance(request.auth, ApiKey) and request.auth.read_only:
            self.message = "This API key is read-only"
            return request.method in permissions.SAFE_METHODS
        return True


def required_perms(request: Request, view: Any) -> tuple[str, ...]:
    """The permissions an unsafe request to ``view`` needs (see ``RolePermissions``)."""
    declared = getattr(view, "required_perms", None)
    if declared is not None:
        return tuple(declared)
    queryset = getattr(view, "queryset", None)
    action = METHOD_ACTIONS.get(request.method or "")
    if queryset is None or action is None:
        # Nothing says what this request changes: only an admin (who holds every permission).
        return ("accounts.undeclared_write",)
    meta = queryset.model._meta
    return (f"{meta.app_label}.{action}_{meta.model_name}",)


class RolePermissions(ApiKeyScope):
    """Reads (GET, HEAD, OPTIONS) need a login or an API key; a read-only key (``vgr_``) may
    only read; every other request needs a Django permission of the key's owner (or the
    session's user), checked before the body is parsed (403, never a 400 that tells what would
    be valid): ``<app>.add_<model>`` to POST, ``change_`` to PUT or PATCH, ``delete_`` to
    DELETE, for the view's queryset model (as DRF's ``DjangoModelPermissions``), or what the
    view or its ``@action(..., required_perms=[...])`` declares (``()``: any logged-in user,
    e.g. for one's own API keys; DRF sets an action's keywords on the view, so a viewset with
    such an action has ``required_perms = None`` as a class attribute). A view with
    ``read_perms`` needs them for reads too (the audit trail: admins only)."""

    #: A subclass for a function view (``@permission_classes``) may name its permissions here.
    perms: tuple[str, ...] | None = None

    def has_permission(self, request: Request, view: Any) -> bool:
        if self._permits(request, view):
            return True
        if getattr(request, "_vigil_key_here", None):
            # Refused by a key's role kept in the process's memory: a role given since then
            # applies at once (the rate limits would check it, but only after this refusal).
            from django.core.cache import cache

            from .authentication import confirm_kept_key

            try:
                entry = cache.get(keycache.name(request._vigil_key_here))
            except Exception:
                entry = None
            confirm_kept_key(request, view, holds=keycache.holds(entry))
            return self._permits(request, view)
        return False

    def _permits(self, request: Request, view: Any) -> bool:
        if not super().has_permission(request, view):
            return False
        if request.method in permissions.SAFE_METHODS:
            needed = tuple(getattr(view, "read_perms", ()))
            if request.user.has_perms(needed):
                return True
            self.message = (
                f"Your role ({role_of(request.user)}) may not read this: "
                f"it needs {', '.join(needed)}"
            )
            return False
        needed = self.perms if self.perms is not None else required_perms(request, view)
        if request.user.has_perms(needed):
            return True
        self.message = (
            f"Your role ({role_of(request.user)}) may not do this: it needs {', '.join(needed)}"
        )
        return False

"""Roles: viewer, operator, admin, as Django groups and permissions (the ecosystem's way).

Viewer (group ``Viewer``, or none): every read, no writes; Operator: also incidents, silences
and probe targets (``OPERATOR_PERMISSIONS``, given by a data migration; other apps may add to
the group in theirs); Admin (group ``Admin``, and superusers): every permission, later models'
too (``backends.RoleBackend``). Every check is a Django permission (``user.has_perm``,
``{% if perms.… %}``, ``RolePermissions`` in the API); the role names are for display, the
admin site's door and cache keys, never for a decision a permission can express, and
``is_staff`` alone opens the admin and nothing else. The table: docs/sign-in.md, "Roles".
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from .signin import GroupMapping

VIEWER = "viewer"
OPERATOR = "operator"
ADMIN = "admin"

VIEWER_GROUP = "Viewer"
OPERATOR_GROUP = "Operator"
ADMIN_GROUP = "Admin"
GROUPS = {VIEWER: VIEWER_GROUP, OPERATOR: OPERATOR_GROUP, ADMIN: ADMIN_GROUP}

#: What the Operator group is given on top of reading (``app_label.codename``).
OPERATOR_PERMISSIONS = (
    "alerts.acknowledge_incident",
    "alerts.annotate_incident",  # given by alerts' migration 0013
    "alerts.add_silence",
    "alerts.change_silence",
    "alerts.delete_silence",
    "alerts.resend_notification",  # given by alerts' migration 0006
    "probes.add_target",
    "probes.change_target",
    "probes.delete_target",
)

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def group_names(user: Any) -> frozenset[str]:
    """The user's group names, read once per user object (a request's user is fresh)."""
    if not getattr(user, "is_authenticated", False) or not getattr(user, "pk", None):
        return frozenset()
    cached = getattr(user, "_vigil_groups", None)
    if cached is None:
        cached = frozenset(user.groups.values_list("name", flat=True))
        user._vigil_groups = cached
    return cached


def is_admin(user: Any) -> bool:
    """An active superuser or member of the Admin group: holds every permission."""
    if not getattr(user, "is_active", False) or not getattr(user, "is_authenticated", False):
        return False
    return bool(user.is_superuser) or ADMIN_GROUP in group_names(user)


def role_of(user: Any) -> str:
    """``"admin"``, ``"operator"`` or ``"viewer"`` (anyone else who is logged in)."""
    if is_admin(user):
        return ADMIN
    if getattr(user, "is_active", False) and OPERATOR_GROUP in group_names(user):
        return OPERATOR
    return VIEWER


def can_use_admin_site(user: Any) -> bool:
    """The admin site's door: staff, operators and admins (permissions decide what is inside)."""
    if not getattr(user, "is_active", False) or not getattr(user, "is_authenticated", False):
        return False
    return bool(user.is_staff) or role_of(user) != VIEWER


def forget_role(user: Any) -> None:
    """Drop what ``group_names`` and the backend cached, after changing the user's groups."""
    for attr in ("_vigil_groups", "_perm_cache", "_user_perm_cache", "_group_perm_cache"):
        if hasattr(user, attr):
            delattr(user, attr)


def group_mapping() -> GroupMapping:
    """Which identity provider's or directory's groups give which role (``VIGIL_SIGNIN_*``)."""
    return GroupMapping.of(
        settings.VIGIL_SIGNIN_ADMIN_GROUPS,
        settings.VIGIL_SIGNIN_OPERATOR_GROUPS,
        settings.VIGIL_SIGNIN_VIEWER_GROUPS,
        settings.VIGIL_SIGNIN_UNMAPPED,
    )


def set_role(user: Any, role: str) -> str:
    """Give ``user`` the role's group and take away the other role groups (their other groups
    stay); returns the role they had. For roles that come from an identity provider's or a
    directory's groups, read again at every sign-in."""
    from django.contrib.auth.models import Group  # models are not ready when roles is imported

    before = role_of(user)
    wanted = GROUPS[role]
    current = set(group_names(user)) & set(GROUPS.values())
    if current != {wanted}:
        removed = Group.objects.filter(name__in=current - {wanted})
        if removed:
            user.groups.remove(*removed)
        if wanted not in current:
            user.groups.add(Group.objects.get(name=wanted))
        forget_role(user)
    return before


def refuse_unless(request: HttpRequest, *perms: str) -> None:
    """403 (``PermissionDenied``) unless the request's user holds every one of ``perms``."""
    if not request.user.has_perms(perms):
        raise PermissionDenied(
            f"Your role ({role_of(request.user)}) may not do this: it needs {', '.join(perms)}."
        )


def writes_require(*perms: str) -> Callable:
    """A page view whose reads are for everyone and whose writes (POST...) need ``perms``.

    For a view that only writes, or a form page that is only useful to those who may submit
    it, Django's ``permission_required(..., raise_exception=True)`` is the same for every method.
    """

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if request.method not in SAFE_METHODS:
                refuse_unless(request, *perms)
            return view(request, *args, **kwargs)

        wrapped.required_perms = perms  # type: ignore[attr-defined]
        return wrapped

    return decorator


def requires(*perms: str) -> Callable:
    """A page view that needs ``perms`` for every method (403 otherwise, never a redirect)."""

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            refuse_unless(request, *perms)
            return view(request, *args, **kwargs)

        wrapped.required_perms = perms  # type: ignore[attr-defined]
        return wrapped

    return decorator

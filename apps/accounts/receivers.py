"""Sign-ins, failed sign-ins and sign-outs, into the audit trail; the role groups kept after a
database flush (connected in apps.py)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from . import keycache
from .audit import record_sign_in
from .models import ApiKey
from .remote import LDAP, METHOD_KEY, OIDC, PASSWORD
from .roles import GROUPS, OPERATOR_GROUP, OPERATOR_PERMISSIONS, role_of


def method_of(request: HttpRequest | None, user: Any) -> str:
    if request is not None and hasattr(request, "vigil_role_decision"):
        return OIDC  # set by the OpenID Connect adapter during this request
    if getattr(user, "backend", "").endswith(".LDAPBackend"):
        return LDAP
    return PASSWORD


def signed_in(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    method = method_of(request, user)
    if request is not None and hasattr(request, "session"):
        request.session[METHOD_KEY] = method
    record_sign_in(request, "signed in", user=user, method=method, role=role_of(user))


def sign_in_failed(
    sender: Any, credentials: dict, request: HttpRequest | None = None, **kwargs: Any
) -> None:
    username = str((credentials or {}).get("username") or "")
    details: dict[str, object] = {}
    if getattr(request, "axes_locked_out", False):
        details["lockout"] = "paused (too many failed logins)"
    refused = getattr(request, "vigil_refused", None)
    if refused is not None:
        return  # the directory's refusal is its own entry (remote.refuse)
    record_sign_in(
        request, "sign-in failed", user=None, username=username, method=PASSWORD, **details
    )


def signed_out(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    if user is not None and getattr(user, "pk", None):
        method = request.session.get(METHOD_KEY, "") if request is not None else ""
        record_sign_in(request, "signed out", user=user, method=method)


def ensure_roles(sender: Any, using: str = "default", **kwargs: Any) -> None:
    """``post_migrate``: the role groups, and the Operator's permissions that exist by now.

    A data migration (accounts.0002, and those of apps that add to the groups) makes them; this
    writes only what is missing, which on a migrated database is nothing. A flush (Django's
    transactional tests, ``manage.py flush``) empties the tables and sends ``post_migrate`` again,
    once per app: each call adds the permissions its app's ``create_permissions`` has just made.
    """
    from django.contrib.auth.models import Group, Permission  # called once the apps are ready

    have = set(Group.objects.using(using).values_list("name", flat=True))
    for name in set(GROUPS.values()) - have:
        Group.objects.using(using).create(name=name)
    operator = Group.objects.using(using).get(name=OPERATOR_GROUP)
    given = {f"{p.content_type.app_label}.{p.codename}" for p in operator.permissions.all()}
    wanted = [perm.split(".") for perm in OPERATOR_PERMISSIONS if perm not in given]
    found = Permission.objects.using(using).filter(
        content_type__app_label__in={app for app, _ in wanted},
        codename__in={codename for _, codename in wanted},
    )
    missing = [p for p in found if [p.content_type.app_label, p.codename] in wanted]
    if missing:
        operator.permissions.add(*missing)


def forget_user(user_id: object) -> None:
    """Tombstones over every key of a user (deactivated, or given or taken a group)."""
    keycache.forget(
        ApiKey.objects.filter(user_id=user_id, revoked=None).values_list("lookup", flat=True)
    )


def user_saved(sender: Any, instance: Any, **kwargs: Any) -> None:
    """``post_save`` of a user: their keys are read again (active? superuser?), unless only
    the time of their last sign-in was saved."""
    if set(kwargs.get("update_fields") or ()) == {"last_login"}:
        return
    forget_user(instance.pk)


def groups_changed(sender: Any, instance: Any, action: str, reverse: bool, **kwargs: Any) -> None:
    """``m2m_changed`` of users' groups, from either side: the users' keys are read again."""
    if not action.startswith("post_") and action != "pre_clear":
        return
    if not reverse:
        forget_user(instance.pk)
        return
    users = kwargs.get("pk_set") or instance.user_set.values_list("pk", flat=True)
    for user_id in users:
        forget_user(user_id)

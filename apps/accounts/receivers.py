"""Sign-ins, failed sign-ins and sign-outs, into the audit trail (connected in apps.py)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from .audit import record_sign_in
from .remote import LDAP, METHOD_KEY, OIDC, PASSWORD
from .roles import role_of


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

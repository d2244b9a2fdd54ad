"""People who sign in through an identity provider or a directory: their role from their
groups at every sign-in, or their refusal, each recorded in the audit trail."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest

from .audit import attribute_to, record_sign_in
from .roles import set_role
from .signin import RoleDecision

OIDC = "OpenID Connect"
LDAP = "LDAP"
PASSWORD = "password"
#: The session's sign-in method (read at sign-out and by the two-factor rule).
METHOD_KEY = "vigil_signin_method"


def apply_decision(
    request: HttpRequest | None, user: Any, decision: RoleDecision, method: str
) -> None:
    """Give ``user`` the decided role. A change is recorded twice: the groups' change (auditlog,
    as the user's own, "via" the sign-in) and an entry naming the group that gave the role."""
    assert decision.role is not None
    attribute_to(user, via=f"sign-in through {method}")
    before = set_role(user, decision.role)
    if before != decision.role:
        unmapped = f"(none: VIGIL_SIGNIN_UNMAPPED={settings.VIGIL_SIGNIN_UNMAPPED})"
        record_sign_in(
            request,
            "role from groups",
            user=user,
            method=method,
            role=(before, decision.role),
            group=decision.group or unmapped,
        )


def refuse(
    request: HttpRequest | None,
    decision: RoleDecision,
    method: str,
    *,
    user: Any = None,
    username: str = "",
) -> None:
    """Record a refusal; an account made earlier is deactivated, so its API keys stop at once.
    Only an admin makes it active again (the provider or directory never does)."""
    if user is not None and user.is_active:
        user.is_active = False
        user.save(update_fields=["is_active"])
    record_sign_in(
        request,
        "refused",
        user=user,
        username=username,
        method=method,
        groups=", ".join(decision.groups) or "(none)",
    )

"""LDAP / Active Directory sign-in: django-auth-ldap's backend, with Vigil's roles.

django-auth-ldap binds (``VIGIL_LDAP_BIND_DN`` or anonymously), finds the person with
``VIGIL_LDAP_USER_FILTER``, binds as them with their password (StartTLS or ldaps, the server's
certificate checked against ``VIGIL_LDAP_CA_FILE``), reads their groups and keeps a Django user
with an unusable password. This backend then gives the role of those groups (by name or DN,
``signin.decide``), or refuses. A wrong password is a failed login like any other: django-axes
counts it. A local account (one with a password of Vigil's own) is never signed in to through
the directory, whatever its username.
"""

from __future__ import annotations

from typing import Any

from django_auth_ldap.backend import LDAPBackend as BaseLDAPBackend

from .remote import LDAP, apply_decision, refuse
from .roles import group_mapping
from .signin import decide


class LDAPBackend(BaseLDAPBackend):
    def get_or_build_user(self, username: str, ldap_user: Any) -> tuple[Any, bool]:
        user, built = super().get_or_build_user(username, ldap_user)
        if not built and user.has_usable_password():
            raise ldap_user.AuthenticationFailed(f"{username} is a local account of Vigil's")
        return user, built

    def authenticate_ldap_user(self, ldap_user: Any, password: str) -> Any:
        user = super().authenticate_ldap_user(ldap_user, password)
        if user is None or not user.is_active:
            return None
        request = ldap_user._request
        groups = (*sorted(ldap_user.group_names), *sorted(ldap_user.group_dns))
        decision = decide(groups, group_mapping())
        if decision.role is None:
            refuse(request, decision, LDAP, user=user)
            if request is not None:
                request.vigil_refused = decision  # the login page says why
            return None
        apply_decision(request, user, decision, LDAP)
        return user

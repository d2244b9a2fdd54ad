"""The push endpoints' plumbing (RAID hosts, Galera nodes): who may push, and how the OpenAPI
schema names the subject's own token (docs/architecture.md, "Collect": pushes take the same
collect.py path as polls)."""

from __future__ import annotations

from typing import Any

from django.db.models import Model
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.request import Request

from apps.accounts.permissions import RolePermissions
from apps.lib.pushtoken import PushToken


class CanPush(RolePermissions):
    """The subject's own push token, or a read-write API key (or session) holding ``perms``.

    Subclasses set ``subject`` (the model a token pushes for), ``noun`` and ``perms``.
    """

    subject: type[Model]
    noun = "subject"

    def has_permission(self, request: Request, view: object) -> bool:
        if isinstance(request.auth, PushToken):
            pk = str(getattr(view, "kwargs", {}).get("pk"))
            self.message = f"This token belongs to another {self.noun}"
            owner = request.auth.subject
            return isinstance(owner, self.subject) and str(owner.pk) == pk
        return super().has_permission(request, view)


def token_scheme(authentication: type | str, name: str, description: str) -> type:
    """Documents an authentication class (or its dotted path) in the OpenAPI schema as a bearer
    scheme called ``name``: the push tokens here, the API keys in ``apps.api.schema``."""
    if isinstance(authentication, str):
        target = authentication
    else:
        target = f"{authentication.__module__}.{authentication.__qualname__}"

    def get_security_definition(self: Any, auto_schema: object) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": description}

    return type(
        f"{target.rsplit('.', 1)[-1]}Scheme",
        (OpenApiAuthenticationExtension,),
        {"target_class": target, "name": name, "get_security_definition": get_security_definition},
    )

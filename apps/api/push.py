"""The push endpoints' plumbing (RAID hosts, Galera nodes): who may push, what an endpoint
takes and answers, and how the OpenAPI schema names the subject's own token
(docs/architecture.md, "Collect": pushes take the same collect.py path as polls)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import Model
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.decorators import (
    api_view,
    authentication_classes,
    parser_classes,
    permission_classes,
)
from rest_framework.request import Request

from apps.accounts.authentication import ApiKeyAuthentication
from apps.accounts.permissions import RolePermissions
from apps.lib.bodies import JSONParser, PlainTextParser
from apps.lib.pushtoken import PushToken

from .errors import ErrorSerializer


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


def push_endpoint(
    *,
    authentication: type,
    permission: type[CanPush],
    request: Any,
    accepted: Any,
    conflict: str,
    description: str,
) -> Callable[[Callable], Any]:
    """A push endpoint: ``POST`` of JSON or ``text/plain`` (read with ``apps.lib.bodies``),
    by the subject's own token (``authentication``) or an API key, allowed by ``permission``;
    in the schema, ``request`` and ``accepted`` (200) are the bodies, ``conflict`` says when
    it answers 409, and the body reader's own refusals (411, 413, 415) are listed."""

    def decorate(view: Callable) -> Any:
        view = parser_classes([JSONParser, PlainTextParser])(view)
        view = permission_classes([permission])(view)
        view = authentication_classes([authentication, ApiKeyAuthentication])(view)
        responses = {
            200: accepted,
            409: OpenApiResponse(ErrorSerializer, description=conflict),
            411: OpenApiResponse(
                ErrorSerializer, description="A chunked body the server cannot end"
            ),
            413: OpenApiResponse(ErrorSerializer, description="The body is over the size limit"),
            415: OpenApiResponse(ErrorSerializer, description="Neither JSON nor text/plain"),
        }
        return extend_schema(request=request, responses=responses, description=description)(
            api_view(["POST"])(view)
        )

    return decorate

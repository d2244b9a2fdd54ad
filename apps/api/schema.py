"""How the OpenAPI schema describes API key authentication, errors, 304s and rate limits.

Loaded by DRF when a schema is generated (``DEFAULT_SCHEMA_CLASS``), not at start: defining
``AutoSchema`` here registers ``ApiKeyScheme`` with drf-spectacular in the same import.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular import openapi
from drf_spectacular.utils import OpenApiResponse

from .errors import ErrorSerializer
from .push import token_scheme

ApiKeyScheme = token_scheme(
    "apps.accounts.authentication.ApiKeyAuthentication",
    "ApiKey",
    "An API key from the API keys page: vgr_… (read-only) or vgw_… (read-write). "
    "X-Api-Key: <key> works too.",
)


def _error(description: str) -> OpenApiResponse:
    return OpenApiResponse(ErrorSerializer, description=description)


class AutoSchema(openapi.AutoSchema):
    """drf-spectacular's, plus the answers any operation may give besides its success.

    401 without a valid key, 403 for a read-only key's write (or a role's), 429 over the rate
    limit, 404 for an unknown id, 400 for invalid input or query parameters, 409 for a DELETE
    of something that holds history (``apps.lib.keep``), 415 for a body in a media type the
    operation does not parse, 304 for a conditional GET.
    """

    def _get_response_bodies(self, direction: str = "response") -> dict[str, Any]:
        responses = super()._get_response_bodies(direction)
        errors = {
            "401": _error("No API key, or an invalid or revoked one"),
            "403": _error("Not allowed: a read-only key's write, or one the role may not make"),
            "429": _error("Over the rate limit; retry after Retry-After seconds"),
        }
        if "{" in self.path:
            errors["404"] = _error("No such object")
        has_query = any(p.get("in") == "query" for p in self._get_parameters())
        if self.method != "GET" or has_query:
            errors["400"] = _error("Invalid input or query parameter")
        if self.method in ("POST", "PUT", "PATCH"):
            errors["415"] = _error("Unsupported media type: send JSON (or a form)")
        if self.method == "DELETE":
            errors["409"] = _error("Not deleted: it holds history; disable it instead")
        for code, response in errors.items():
            if code not in responses:
                responses[code] = self._get_response_for_code(response, code, direction=direction)
        if self.method == "GET":
            responses.setdefault("304", {"description": "Not modified since the ETag or date"})
        return responses

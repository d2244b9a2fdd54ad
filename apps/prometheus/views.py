"""``/metrics`` for Prometheus: the fleet's current figures, for an API key or an allowed address.

A plain Django view, not a DRF one: it is not part of the REST API's schema or throttling.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_GET
from rest_framework import exceptions

from apps.accounts.authentication import ApiKeyAuthentication
from apps.lib.clientip import client_ip

from .access import address_allowed, networks
from .collector import render


def _refuse(message: str) -> JsonResponse:
    response = JsonResponse({"error": message}, status=401)
    response["WWW-Authenticate"] = ApiKeyAuthentication.keyword
    return response


@login_not_required  # its own authentication below: Prometheus has no session
@require_GET
@never_cache
@gzip_page
def metrics(request: HttpRequest) -> HttpResponse:
    try:
        found = ApiKeyAuthentication().authenticate(request)
    except exceptions.AuthenticationFailed as error:
        return _refuse(str(error.detail))
    if found is None and not address_allowed(
        client_ip(request), networks(tuple(settings.VIGIL_METRICS_ALLOW))
    ):
        return _refuse(
            "Authentication required: send an API key as 'Authorization: Bearer …', "
            "or scrape from an address in VIGIL_METRICS_ALLOW"
        )
    body, content_type = render(request.headers.get("Accept", ""))
    return HttpResponse(body, content_type=content_type)

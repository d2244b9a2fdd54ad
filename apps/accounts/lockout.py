"""The login lockout (django-axes): per username and address, and per username everywhere.

Failed logins (the login page, the admin's, a directory's wrong password) are counted by
django-axes under two keys: the username with the client's address, where an IPv6 address
counts as its /64 (``signin.lockout_address``), and the username alone. The pair is paused after
``VIGIL_LOGIN_FAILURE_LIMIT`` failures, the username from every address after
``VIGIL_LOGIN_USER_FAILURE_LIMIT``: many addresses guessing one password share one budget.
"""

from __future__ import annotations

from axes.handlers.database import AxesDatabaseHandler
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apps.lib.clientip import client_ip

from .signin import lockout_address as group_address


def lockout_address(request: HttpRequest) -> str:
    """``AXES_CLIENT_IP_CALLABLE``: the client's address, an IPv6 one as its /64."""
    return group_address(client_ip(request))


def lockout_username(request: HttpRequest, credentials: dict | None) -> str | None:
    """``AXES_USERNAME_CALLABLE``: the username tried (what authenticate was given, else the
    sign-in form's ``login`` field)."""
    username = (credentials or {}).get("username")
    if username is None and request is not None and request.method == "POST":
        username = request.POST.get("login")
    return username


class LockoutHandler(AxesDatabaseHandler):
    """django-axes' database handler, with a limit of its own for the username alone.

    ``AXES_LOCKOUT_PARAMETERS`` is ``[["username", "ip_address"], "username"]``: axes compares
    the larger count with ``AXES_FAILURE_LIMIT``, so the username's count, across every address,
    only locks out when it reaches ``VIGIL_LOGIN_USER_FAILURE_LIMIT`` (then it counts as the
    limit itself, for both the check before a login and the decision after a failure).
    """

    def get_failures(self, request: HttpRequest, credentials: dict | None = None) -> int:
        counts = [
            attempts.aggregate(total=Sum("failures_since_start"))["total"] or 0
            for attempts in self.get_user_attempts(request, credentials)
        ]
        pair = counts[0] if counts else 0
        user = counts[1] if len(counts) > 1 else 0
        if user >= settings.VIGIL_LOGIN_USER_FAILURE_LIMIT:
            request.vigil_locked_everywhere = True
            return max(pair, settings.AXES_FAILURE_LIMIT)
        return pair


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None, credentials: dict | None
) -> HttpResponse:
    """django-axes' answer to a locked-out login: a page saying how long to wait, 429."""
    minutes = max(1, round(settings.AXES_COOLOFF_TIME.total_seconds() / 60))
    everywhere = getattr(request, "vigil_locked_everywhere", False)
    context = {
        "username": lockout_username(request, credentials) or "",
        "failure_limit": (
            settings.VIGIL_LOGIN_USER_FAILURE_LIMIT if everywhere else settings.AXES_FAILURE_LIMIT
        ),
        "everywhere": everywhere,
        "minutes": minutes,
    }
    response = render(request, "registration/locked_out.html", context, status=429)
    response["Retry-After"] = str(minutes * 60)
    return response

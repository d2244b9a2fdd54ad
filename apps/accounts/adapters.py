"""django-allauth's adapters: Vigil's rules for its sign-in flows.

- Nobody signs up: local accounts are made by an admin (or ``ensure_admin``); an OpenID Connect
  provider's people are made at their first sign-in, with no form.
- At every sign-in through the provider, the role comes from the groups claim
  (``signin.decide``); someone with no mapped group, when ``VIGIL_SIGNIN_UNMAPPED=refuse``, is
  refused with a page saying so, and an account made earlier is deactivated, so their API
  keys stop at once. A role that changes is recorded in the audit trail.
- Sign-out also ends the provider's session when its discovery document names an
  ``end_session_endpoint`` (RP-initiated logout, with ``client_id`` and a return address).
- The provider's addresses (discovery, token, userinfo, keys) are judged by the outbound
  guard's always-refused rules (link-local, the metadata service...) before each call: the
  discovery document, not the operator, names most of them.
"""

from __future__ import annotations

import functools
from typing import Any
from urllib.parse import urlencode, urlsplit

import requests
from allauth.account.adapter import DefaultAccountAdapter
from allauth.core.exceptions import ImmediateHttpResponse
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from django.conf import settings
from django.http import HttpRequest
from django.shortcuts import render
from django.urls import reverse

from apps.lib import outbound

from .remote import METHOD_KEY, OIDC, apply_decision, refuse
from .roles import group_mapping
from .signin import RoleDecision, decide, group_names


class AccountAdapter(DefaultAccountAdapter):
    def is_open_for_signup(self, request: HttpRequest) -> bool:
        return False  # local accounts come from an admin

    def add_message(self, *args: Any, **kwargs: Any) -> None:
        """None: Vigil's pages say who is signed in and show two-factor's state; a message
        would wait in the session for the next page that shows messages (a probe's)."""

    def login(self, request: HttpRequest, user: Any) -> None:
        if not hasattr(user, "backend"):  # a provider's sign-in: sessions are RoleBackend's
            user.backend = "apps.accounts.backends.RoleBackend"
        super().login(request, user)

    def get_logout_redirect_url(self, request: HttpRequest) -> str:
        """After signing out of Vigil, the provider's end-session page when it has one."""
        local = super().get_logout_redirect_url(request)
        if request.session.get(METHOD_KEY) != OIDC or not settings.VIGIL_OIDC_PROVIDER_LOGOUT:
            return local
        try:
            end_session = provider_configuration().get("end_session_endpoint")
        except (requests.RequestException, ValueError, outbound.OutboundRefused):
            return local
        if not isinstance(end_session, str) or urlsplit(end_session).scheme not in (
            "http",
            "https",
        ):
            return local
        back = request.build_absolute_uri(reverse("account_login"))
        query = urlencode(
            {"client_id": settings.VIGIL_OIDC_CLIENT_ID, "post_logout_redirect_uri": back}
        )
        return f"{end_session}{'&' if '?' in end_session else '?'}{query}"


class SocialAccountAdapter(DefaultSocialAccountAdapter):
    def is_open_for_signup(self, request: HttpRequest, sociallogin: Any) -> bool:
        return True  # the provider vouches for its people; the groups decide the role

    def get_requests_session(self) -> requests.Session:
        return guarded_session()

    def pre_social_login(self, request: HttpRequest, sociallogin: Any) -> None:
        """Every sign-in through the provider: the role from the groups claim, or a refusal."""
        decision = decide(groups_of(sociallogin.account.extra_data), group_mapping())
        request.vigil_role_decision = decision  # for save_user, at a first sign-in
        user = sociallogin.user if sociallogin.is_existing else None
        if decision.role is None:
            name = str(extra(sociallogin.account.extra_data).get("preferred_username", ""))
            refuse(request, decision, OIDC, user=user, username=name)
            raise ImmediateHttpResponse(refused_page(request, decision))
        if user is not None and user.is_active:  # an inactive one: allauth's page
            apply_decision(request, user, decision, OIDC)

    def save_user(self, request: HttpRequest, sociallogin: Any, form: Any = None) -> Any:
        user = super().save_user(request, sociallogin, form)
        apply_decision(request, user, request.vigil_role_decision, OIDC)
        return user


def extra(extra_data: Any) -> dict:
    """The person's claims: the userinfo answer, else the ID token's (allauth keeps both)."""
    if not isinstance(extra_data, dict):
        return {}
    for part in ("userinfo", "id_token"):
        if isinstance(extra_data.get(part), dict):
            return extra_data[part]
    return extra_data


def groups_of(extra_data: Any) -> tuple[str, ...]:
    """The groups claim, from the userinfo answer or else the ID token."""
    claim = settings.VIGIL_OIDC_GROUPS_CLAIM
    for part in ("userinfo", "id_token"):
        data = extra_data.get(part) if isinstance(extra_data, dict) else None
        if isinstance(data, dict) and claim in data:
            return group_names(data[claim])
    return ()


def refused_page(request: HttpRequest, decision: RoleDecision) -> Any:
    return render(
        request,
        "account/refused.html",
        {"groups": decision.groups, "method": OIDC, "provider": settings.VIGIL_OIDC_NAME},
        status=403,
    )


def _judged(send: Any, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
    host = urlsplit(url).hostname or ""
    port = urlsplit(url).port or (443 if url.startswith("https:") else 80)
    outbound.resolve(host, port, outbound.Policy(allow_loopback=True))  # raises if refused
    return send(method, url, *args, **kwargs)


def guarded_session() -> requests.Session:
    """A requests session whose calls are judged by the outbound guard and time out."""
    session = requests.Session()
    send = functools.partial(session.request, timeout=settings.SOCIALACCOUNT_REQUESTS_TIMEOUT)
    session.request = functools.partial(_judged, send)  # type: ignore[method-assign]
    return session


def provider_configuration() -> dict:
    """The provider's discovery document."""
    url = settings.VIGIL_OIDC_SERVER_URL + "/.well-known/openid-configuration"
    with guarded_session() as session:
        response = session.get(url)
        response.raise_for_status()
        found = response.json()
    if not isinstance(found, dict):
        raise ValueError("the discovery document is not a JSON object")
    return found

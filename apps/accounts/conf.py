"""Sign-in (apps/accounts): its ``VIGIL_*`` settings (``apps.lib.appconf``), and the Django
settings of django-allauth and django-auth-ldap they become (``sign_in_settings``).

Each is documented in ``.env.example``; a wrong value or a half-given provider stops the start
with a message naming the variable. No Django here: this runs while the settings load.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from apps.lib.appconf import Setting, one_of

from .signin import UNMAPPED_CHOICES, GroupMapping

MFA_REQUIRED_CHOICES = ("none", "admins", "everyone")
LOCAL_SIGNIN_CHOICES = ("everyone", "superusers")
LDAP_GROUP_TYPES = {
    # VIGIL_LDAP_GROUP_TYPE -> django_auth_ldap.config class and its object class
    "groupOfNames": ("GroupOfNamesType", "groupOfNames"),
    "groupOfUniqueNames": ("GroupOfUniqueNamesType", "groupOfUniqueNames"),
    "posixGroup": ("PosixGroupType", "posixGroup"),
    "activeDirectory": ("NestedActiveDirectoryGroupType", "group"),
}


def _http_url(value: str) -> str:
    value = value.strip()
    if value and (urlsplit(value).scheme not in ("http", "https") or not urlsplit(value).netloc):
        raise ValueError(f"{value!r}: expected the provider's https:// address (its issuer)")
    return value.rstrip("/")


def _ldap_uri(value: str) -> str:
    value = value.strip()
    for uri in value.split():
        if urlsplit(uri).scheme not in ("ldap", "ldaps") or not urlsplit(uri).netloc:
            raise ValueError(f"{uri!r}: expected ldap://host[:port] or ldaps://host[:port]")
    return value


def _readable_file(value: str) -> str:
    value = value.strip()
    if value and not os.access(value, os.R_OK):
        raise ValueError(f"{value!r} is not a readable file (a PEM file of CA certificates)")
    return value


def _names(value: list[str]) -> list[str]:
    return [v.strip() for v in value if v.strip()]


SETTINGS = (
    # --- OpenID Connect (any standard provider) ---
    Setting(
        "VIGIL_OIDC_SERVER_URL",
        check=_http_url,
        help="OpenID Connect: the provider's issuer URL (its discovery document is "
        "<it>/.well-known/openid-configuration); the client registered there has the redirect "
        "URI <VIGIL_BASE_URL>/accounts/sso/oidc/login/callback/. Empty: no provider.",
    ),
    Setting("VIGIL_OIDC_CLIENT_ID", help="The client registered with the provider."),
    Setting("VIGIL_OIDC_CLIENT_SECRET", help="Its secret."),
    Setting(
        "VIGIL_OIDC_NAME",
        default="Single sign-on",
        help='What the sign-in page\'s button says: "Sign in with <name>".',
    ),
    Setting(
        "VIGIL_OIDC_SCOPES",
        "list",
        ["openid", "profile", "email", "groups"],
        help="Scopes asked for (openid required).",
    ),
    Setting(
        "VIGIL_OIDC_GROUPS_CLAIM",
        default="groups",
        help="The claim (in the userinfo answer or the ID token) that lists the person's groups.",
    ),
    Setting(
        "VIGIL_OIDC_PROVIDER_LOGOUT",
        "bool",
        True,
        help="Sign-out also ends the provider's session when it offers an end_session_endpoint.",
    ),
    # --- LDAP / Active Directory (django-auth-ldap) ---
    Setting(
        "VIGIL_LDAP_SERVER_URI",
        check=_ldap_uri,
        help="LDAP / Active Directory: ldap://host[:port] (with VIGIL_LDAP_START_TLS=true) or "
        "ldaps://host[:port]. Empty: no directory. Needs django-auth-ldap (make ldap).",
    ),
    Setting(
        "VIGIL_LDAP_BIND_DN", help="The account Vigil searches with (empty: an anonymous bind)."
    ),
    Setting(
        "VIGIL_LDAP_BIND_PASSWORD", help="Its password, best as VIGIL_LDAP_BIND_PASSWORD_FILE."
    ),
    Setting("VIGIL_LDAP_USER_SEARCH_BASE", help="Where people are."),
    Setting(
        "VIGIL_LDAP_USER_FILTER",
        default="(uid=%(user)s)",
        help="How a username finds them (Active Directory: (sAMAccountName=%(user)s)).",
    ),
    Setting("VIGIL_LDAP_GROUP_SEARCH_BASE", help="Where groups are."),
    Setting(
        "VIGIL_LDAP_GROUP_TYPE",
        default="groupOfNames",
        check=one_of(*LDAP_GROUP_TYPES),
        help="The groups' kind (activeDirectory: nested groups count).",
    ),
    Setting("VIGIL_LDAP_START_TLS", "bool", False, help="StartTLS on an ldap:// URI."),
    Setting(
        "VIGIL_LDAP_CA_FILE",
        check=_readable_file,
        help="CA certificates (PEM) the server's certificate must chain to; empty: the system's.",
    ),
    Setting(
        "VIGIL_LDAP_TIMEOUT", "float", 10.0, help="Seconds for connecting and for each search."
    ),
    # --- Roles from groups (OpenID Connect and LDAP alike) ---
    Setting(
        "VIGIL_SIGNIN_ADMIN_GROUPS",
        "list",
        [],
        check=_names,
        help="Groups whose people are admins (OpenID Connect and LDAP alike, read at every "
        "sign-in; an LDAP group by its cn or its whole DN; case does not matter).",
    ),
    Setting("VIGIL_SIGNIN_OPERATOR_GROUPS", "list", [], check=_names, help="...operators."),
    Setting("VIGIL_SIGNIN_VIEWER_GROUPS", "list", [], check=_names, help="...viewers."),
    Setting(
        "VIGIL_SIGNIN_UNMAPPED",
        default="refuse",
        check=one_of(*UNMAPPED_CHOICES),
        help="Someone in none of those groups: refuse, or viewer.",
    ),
    # --- Local accounts and two-factor ---
    Setting(
        "VIGIL_LOCAL_SIGNIN",
        default="everyone",
        check=one_of(*LOCAL_SIGNIN_CHOICES),
        help="Who may sign in with a password kept by Vigil: everyone, or superusers only.",
    ),
    Setting(
        "VIGIL_MFA_REQUIRED",
        default="none",
        check=one_of(*MFA_REQUIRED_CHOICES),
        help="Two-factor required for password sign-ins of: none, admins, everyone.",
    ),
    Setting(
        "VIGIL_LOGIN_USER_FAILURE_LIMIT",
        "int",
        20,
        help="Failed logins for one username from every address together before it is paused "
        "(the per-address limit is VIGIL_LOGIN_FAILURE_LIMIT).",
    ),
)


def _mapping(values: dict[str, Any]) -> GroupMapping:
    return GroupMapping.of(
        values["VIGIL_SIGNIN_ADMIN_GROUPS"],
        values["VIGIL_SIGNIN_OPERATOR_GROUPS"],
        values["VIGIL_SIGNIN_VIEWER_GROUPS"],
        values["VIGIL_SIGNIN_UNMAPPED"],
    )


def _need(values: dict[str, Any], when: str, *names: str) -> None:
    missing = [n for n in names if not values[n]]
    if missing:
        raise ImproperlyConfigured(f"{when} is set, so {', '.join(missing)} must be set too")


def form_targets(values: dict[str, Any]) -> list[str]:
    """Origins besides Vigil's that its forms may lead to (CSP ``form-action``, which browsers
    apply to a form's redirects too): the provider's, for the sign-in button and sign-out."""
    url = values["VIGIL_OIDC_SERVER_URL"]
    return [f"{urlsplit(url).scheme}://{urlsplit(url).netloc}"] if url else []


def sign_in_settings(values: dict[str, Any]) -> dict[str, Any]:
    """The Django settings of the sign-in ways ``values`` (this module's settings) turn on:
    ``SOCIALACCOUNT_PROVIDERS`` for OpenID Connect, ``AUTH_LDAP_*`` and the LDAP backend."""
    out: dict[str, Any] = {"SOCIALACCOUNT_PROVIDERS": {}, "VIGIL_LDAP_ENABLED": False}
    remote = values["VIGIL_OIDC_SERVER_URL"] or values["VIGIL_LDAP_SERVER_URI"]
    if remote and _mapping(values).empty and values["VIGIL_SIGNIN_UNMAPPED"] == "refuse":
        raise ImproperlyConfigured(
            "VIGIL_SIGNIN_ADMIN_GROUPS, VIGIL_SIGNIN_OPERATOR_GROUPS and VIGIL_SIGNIN_VIEWER_GROUPS "
            "are all empty while VIGIL_SIGNIN_UNMAPPED=refuse: nobody could sign in through the "
            "provider or the directory. Map a group, or set VIGIL_SIGNIN_UNMAPPED=viewer"
        )
    if values["VIGIL_OIDC_SERVER_URL"]:
        _need(values, "VIGIL_OIDC_SERVER_URL", "VIGIL_OIDC_CLIENT_ID", "VIGIL_OIDC_CLIENT_SECRET")
        if "openid" not in values["VIGIL_OIDC_SCOPES"]:
            raise ImproperlyConfigured("Invalid value for VIGIL_OIDC_SCOPES: it must hold openid")
        out["SOCIALACCOUNT_PROVIDERS"] = {
            "openid_connect": {
                "OAUTH_PKCE_ENABLED": True,
                "APPS": [
                    {
                        "provider_id": "oidc",
                        "name": values["VIGIL_OIDC_NAME"],
                        "client_id": values["VIGIL_OIDC_CLIENT_ID"],
                        "secret": values["VIGIL_OIDC_CLIENT_SECRET"],
                        "settings": {
                            "server_url": values["VIGIL_OIDC_SERVER_URL"],
                            "scope": values["VIGIL_OIDC_SCOPES"],
                        },
                    }
                ],
            }
        }
    elif values["VIGIL_OIDC_CLIENT_ID"] or values["VIGIL_OIDC_CLIENT_SECRET"]:
        raise ImproperlyConfigured(
            "VIGIL_OIDC_CLIENT_ID or VIGIL_OIDC_CLIENT_SECRET is set without VIGIL_OIDC_SERVER_URL"
        )
    if values["VIGIL_LDAP_SERVER_URI"]:
        out.update(_ldap_settings(values))
    elif values["VIGIL_LDAP_BIND_DN"] or values["VIGIL_LDAP_USER_SEARCH_BASE"]:
        raise ImproperlyConfigured(
            "VIGIL_LDAP_BIND_DN or VIGIL_LDAP_USER_SEARCH_BASE is set without VIGIL_LDAP_SERVER_URI"
        )
    return out


def _check_ldap_server(values: dict[str, Any]) -> None:
    """Refuse a directory Vigil could not sign in against: no user search base, StartTLS
    over ldaps://, or a user filter without the name signed in with."""
    _need(values, "VIGIL_LDAP_SERVER_URI", "VIGIL_LDAP_USER_SEARCH_BASE")
    if values["VIGIL_LDAP_START_TLS"] and values["VIGIL_LDAP_SERVER_URI"].startswith("ldaps://"):
        raise ImproperlyConfigured(
            "VIGIL_LDAP_START_TLS=true with an ldaps:// VIGIL_LDAP_SERVER_URI: ldaps is TLS "
            "already; use ldap:// with StartTLS, or ldaps:// without it"
        )
    if "%(user)s" not in values["VIGIL_LDAP_USER_FILTER"]:
        raise ImproperlyConfigured(
            "Invalid value for VIGIL_LDAP_USER_FILTER: it must hold %(user)s, e.g. (uid=%(user)s)"
        )


def _ldap_settings(values: dict[str, Any]) -> dict[str, Any]:
    _check_ldap_server(values)
    uri = values["VIGIL_LDAP_SERVER_URI"]
    try:
        # Only here: django-auth-ldap needs python-ldap, built against libldap (requirements/
        # ldap.txt), which an installation without LDAP does not have to install.
        import ldap
        from django_auth_ldap import config
    except ImportError as exc:
        raise ImproperlyConfigured(
            "VIGIL_LDAP_SERVER_URI is set but django-auth-ldap is not installed: "
            "`make ldap` (or `uv pip install -r requirements/ldap.txt`; it builds python-ldap "
            f"and needs Debian's libldap2-dev and libsasl2-dev) ({exc})"
        ) from exc
    if not values["VIGIL_LDAP_GROUP_SEARCH_BASE"] and not _mapping(values).empty:
        raise ImproperlyConfigured(
            "VIGIL_SIGNIN_*_GROUPS map groups to roles, so VIGIL_LDAP_GROUP_SEARCH_BASE must say "
            "where the directory's groups are"
        )
    group_class, object_class = LDAP_GROUP_TYPES[values["VIGIL_LDAP_GROUP_TYPE"]]
    timeout = values["VIGIL_LDAP_TIMEOUT"]
    options: dict[int, Any] = {
        ldap.OPT_REFERRALS: 0,  # Active Directory's referrals need a bind of their own
        ldap.OPT_NETWORK_TIMEOUT: timeout,
        ldap.OPT_TIMEOUT: timeout,
        ldap.OPT_X_TLS_REQUIRE_CERT: ldap.OPT_X_TLS_DEMAND,
    }
    if values["VIGIL_LDAP_CA_FILE"]:
        options[ldap.OPT_X_TLS_CACERTFILE] = values["VIGIL_LDAP_CA_FILE"]
    options[ldap.OPT_X_TLS_NEWCTX] = 0  # last: makes the TLS options above take effect
    out: dict[str, Any] = {
        "VIGIL_LDAP_ENABLED": True,
        "AUTH_LDAP_SERVER_URI": uri,
        "AUTH_LDAP_BIND_DN": values["VIGIL_LDAP_BIND_DN"],
        "AUTH_LDAP_BIND_PASSWORD": values["VIGIL_LDAP_BIND_PASSWORD"],
        "AUTH_LDAP_START_TLS": values["VIGIL_LDAP_START_TLS"],
        "AUTH_LDAP_CONNECTION_OPTIONS": options,
        "AUTH_LDAP_USER_SEARCH": config.LDAPSearch(
            values["VIGIL_LDAP_USER_SEARCH_BASE"],
            ldap.SCOPE_SUBTREE,
            values["VIGIL_LDAP_USER_FILTER"],
        ),
        "AUTH_LDAP_USER_ATTR_MAP": {"first_name": "givenName", "last_name": "sn", "email": "mail"},
        "AUTH_LDAP_ALWAYS_UPDATE_USER": True,
        "AUTH_LDAP_CACHE_TIMEOUT": 0,  # groups are read at every sign-in, never cached
    }
    if values["VIGIL_LDAP_GROUP_SEARCH_BASE"]:
        out["AUTH_LDAP_GROUP_SEARCH"] = config.LDAPSearch(
            values["VIGIL_LDAP_GROUP_SEARCH_BASE"],
            ldap.SCOPE_SUBTREE,
            f"(objectClass={object_class})",
        )
        out["AUTH_LDAP_GROUP_TYPE"] = getattr(config, group_class)()
    return out

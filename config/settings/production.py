"""Production settings: secrets required, secure cookies, PostgreSQL and Redis expected."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from apps.lib import appconf
from apps.lib import conf as core_conf

from .base import *  # noqa: F403
from .base import CONTENT_SECURITY_POLICY

# Read again with their production defaults, and those only production reads (apps/lib/conf.py):
# SECRET_KEY and ALLOWED_HOSTS required, DEBUG off, VIGIL_PROXY_COUNT 1, Amazon SES, secure
# cookies, HSTS for a year (as Django's deploy check asks; browsers heed it on HTTPS only), and
# demo mode off unless VIGIL_DEMO=true: "auto" (the local default) would turn it on, and
# loopback probing with it, on an instance whose role gives it no credentials in the environment.
production = appconf.read_production(core_conf.SETTINGS)
globals().update(production)
if len(production["SECRET_KEY"]) < 32:  # docker compose passes an unset variable as ""
    raise ImproperlyConfigured("SECRET_KEY must be set to a random value of 32+ characters")

# Behind a TLS-terminating proxy (nginx, a load balancer) that sets X-Forwarded-Proto and
# appends the client's address to X-Forwarded-For; VIGIL_PROXY_COUNT=0 when exposed directly.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
CSRF_COOKIE_SECURE = production["SESSION_COOKIE_SECURE"]
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = True  # pages send the token from the template (hx-headers), not the cookie
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
# Browsers asked to upgrade any http: subresource; the policy itself is base.py's.
CONTENT_SECURITY_POLICY = {
    **CONTENT_SECURITY_POLICY,
    "DIRECTIVES": {**CONTENT_SECURITY_POLICY["DIRECTIVES"], "upgrade-insecure-requests": True},
}

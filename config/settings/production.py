"""Production settings: secrets required, secure cookies, PostgreSQL and Redis expected."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import CONTENT_SECURITY_POLICY, setting

SECRET_KEY = setting("SECRET_KEY")
if len(SECRET_KEY) < 32:  # docker compose passes an unset variable as ""
    raise ImproperlyConfigured("SECRET_KEY must be set to a random value of 32+ characters")
DEBUG = setting("DEBUG", "bool", default=False)
ALLOWED_HOSTS = setting("ALLOWED_HOSTS", "list")

# Behind a TLS-terminating proxy (nginx, a load balancer) that sets X-Forwarded-Proto and
# appends the client's address to X-Forwarded-For; VIGIL_PROXY_COUNT=0 when exposed directly.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
VIGIL_PROXY_COUNT = setting("VIGIL_PROXY_COUNT", "int", default=1)
SECURE_SSL_REDIRECT = setting("SECURE_SSL_REDIRECT", "bool", default=False)
SESSION_COOKIE_SECURE = setting("SESSION_COOKIE_SECURE", "bool", default=True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = True  # pages send the token from the template (hx-headers), not the cookie
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
# Sent only over HTTPS (browsers ignore it on plain HTTP); a year, as Django's deploy check asks.
SECURE_HSTS_SECONDS = setting("SECURE_HSTS_SECONDS", "int", default=31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = setting("SECURE_HSTS_INCLUDE_SUBDOMAINS", "bool", default=False)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
# Browsers asked to upgrade any http: subresource; the policy itself is base.py's.
CONTENT_SECURITY_POLICY = {
    **CONTENT_SECURITY_POLICY,
    "DIRECTIVES": {**CONTENT_SECURITY_POLICY["DIRECTIVES"], "upgrade-insecure-requests": True},
}

# Demo mode is off unless VIGIL_DEMO=true: "auto" (the local default, base.py) would turn it on,
# and loopback probing with it, on an instance whose role gives it no credentials in the
# environment.
VIGIL_DEMO = setting("VIGIL_DEMO", default="false").lower()

EMAIL_BACKEND = setting("EMAIL_BACKEND", default="anymail.backends.amazon_ses.EmailBackend")

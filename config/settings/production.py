"""Production settings: secrets required, secure cookies, PostgreSQL and Redis expected."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import setting

SECRET_KEY = setting("SECRET_KEY")
if len(SECRET_KEY) < 32:  # docker compose passes an unset variable as ""
    raise ImproperlyConfigured("SECRET_KEY must be set to a random value of 32+ characters")
DEBUG = setting("DEBUG", "bool", default=False)
ALLOWED_HOSTS = setting("ALLOWED_HOSTS", "list")

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = setting("SECURE_SSL_REDIRECT", "bool", default=False)
SESSION_COOKIE_SECURE = setting("SESSION_COOKIE_SECURE", "bool", default=True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_HTTPONLY = True
SECURE_HSTS_SECONDS = setting("SECURE_HSTS_SECONDS", "int", default=0)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

EMAIL_BACKEND = setting("EMAIL_BACKEND", default="anymail.backends.amazon_ses.EmailBackend")

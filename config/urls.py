"""URL configuration: pages per app (each concern's from the concern registry), the admin,
login, and the API under /api/."""

from __future__ import annotations

from allauth.account import views as allauth_views
from allauth.socialaccount import views as social_views
from allauth.socialaccount.providers.openid_connect import urls as oidc_urls
from django.contrib import admin
from django.urls import include, path

from apps.accounts import views as account_views
from apps.regions import concerns

urlpatterns = [
    # First: an API request is resolved without trying the pages' hundred-odd patterns (about
    # 0.8 ms of its CPU under bench/load.sh when it came last); nothing else starts with api/.
    path("api/", include(("config.api", "api"))),
    path("", include("apps.regions.urls")),
    # Sign-in (django-allauth): only the flows Vigil uses; nobody signs up, resets or mails.
    path("accounts/login/", account_views.sign_in, name="account_login"),
    path("accounts/logout/", allauth_views.logout, name="account_logout"),
    path("accounts/inactive/", allauth_views.account_inactive, name="account_inactive"),
    path("accounts/reauthenticate/", allauth_views.reauthenticate, name="account_reauthenticate"),
    path("accounts/2fa/", include("allauth.mfa.urls")),  # TOTP, recovery codes, WebAuthn
    path("accounts/sso/", include(oidc_urls)),  # <provider>/login/ and its callback
    path("accounts/sso/signup/", social_views.signup, name="socialaccount_signup"),
    path("accounts/sso/error/", social_views.login_error, name="socialaccount_login_error"),
    path(
        "accounts/sso/cancelled/",
        social_views.login_cancelled,
        name="socialaccount_login_cancelled",
    ),
    path("accounts/", include("apps.accounts.urls")),
    path("alerts/", include("apps.alerts.urls")),
    *concerns.url_patterns(),  # /<key>/ -> each concern's urls.py (apps/regions/concerns.py)
    path("healthz", account_views.healthz, name="healthz"),
    path("favicon.ico", account_views.favicon, name="favicon"),
    path("metrics", include("apps.prometheus.urls")),
    path("admin/", admin.site.urls),
]

handler403 = "apps.api.errors.permission_denied"
handler404 = "apps.api.errors.not_found"
handler500 = "apps.api.errors.server_error"

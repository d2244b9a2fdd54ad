"""URL configuration: pages per app (each concern's from the concern registry), the admin,
login, and the API under /api/."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from apps.accounts import views as account_views
from apps.regions import concerns

urlpatterns = [
    path("", include("apps.regions.urls")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/", include("apps.accounts.urls")),
    path("alerts/", include("apps.alerts.urls")),
    *concerns.url_patterns(),  # /<key>/ -> each concern's urls.py (apps/regions/concerns.py)
    path("healthz", account_views.healthz, name="healthz"),
    path("favicon.ico", account_views.favicon, name="favicon"),
    path("metrics", include("apps.prometheus.urls")),
    path("admin/", admin.site.urls),
    path("api/", include(("config.api", "api"))),
]

handler403 = "apps.api.errors.permission_denied"
handler404 = "apps.api.errors.not_found"
handler500 = "apps.api.errors.server_error"

"""The admin site, opened to operators and admins as well as to staff.

Inside, Django's permissions decide every page and button, as everywhere else in Vigil:
an operator sees silences and probe targets, an admin everything, a staff viewer nothing.
Its login is Vigil's sign-in page, so two-factor and the lockout hold there too.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import resolve_url
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.http import urlencode
from django.views.decorators.cache import never_cache

from .roles import can_use_admin_site


class VigilAdminSite(admin.AdminSite):
    site_header = "Vigil administration"

    def has_permission(self, request: HttpRequest) -> bool:
        return can_use_admin_site(request.user)

    @method_decorator(never_cache)
    @login_not_required
    def login(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        """Vigil's sign-in page (its lockout, two-factor and providers), then back here; a
        signed-in person the admin site does not open to gets Django's page saying so."""
        if request.user.is_authenticated:
            return super().login(request, extra_context)
        target = request.GET.get(REDIRECT_FIELD_NAME) or reverse(
            "admin:index", current_app=self.name
        )
        query = urlencode({REDIRECT_FIELD_NAME: target})
        return HttpResponseRedirect(f"{resolve_url(settings.LOGIN_URL)}?{query}")


class VigilAdminConfig(AdminConfig):
    default_site = "apps.accounts.admin_site.VigilAdminSite"

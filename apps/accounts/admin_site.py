"""The admin site, opened to operators and admins as well as to staff.

Inside, Django's permissions decide every page and button, as everywhere else in Vigil:
an operator sees silences and probe targets, an admin everything, a staff viewer nothing.
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.http import HttpRequest

from .roles import can_use_admin_site


class VigilAdminSite(admin.AdminSite):
    site_header = "Vigil administration"

    def has_permission(self, request: HttpRequest) -> bool:
        return can_use_admin_site(request.user)


class VigilAdminConfig(AdminConfig):
    default_site = "apps.accounts.admin_site.VigilAdminSite"

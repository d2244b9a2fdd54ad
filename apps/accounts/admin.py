from __future__ import annotations

from allauth.mfa.models import Authenticator
from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import User
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest

from .models import ApiKey


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = [
        "display_prefix",
        "name",
        "user",
        "read_only",
        "created",
        "last_used",
        "revoked",
    ]
    list_filter = ["read_only"]
    readonly_fields = ["lookup", "created", "last_used"]
    exclude = ["hashed"]

    def has_add_permission(self, request: object) -> bool:
        return False  # keys are issued on the API keys page, which shows the key once


class VigilUserAdmin(UserAdmin):
    """Django's user admin, with who has two-factor and how each person signs in."""

    list_display = [*UserAdmin.list_display, "two_factor", "signs_in_with"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return (
            super()
            .get_queryset(request)
            .annotate(
                two_factor_count=Count(
                    "authenticator",
                    filter=~Q(authenticator__type=Authenticator.Type.RECOVERY_CODES),
                    distinct=True,
                ),
                provider_count=Count("socialaccount", distinct=True),
            )
        )

    @admin.display(boolean=True, description="Two-factor", ordering="two_factor_count")
    def two_factor(self, user: object) -> bool:
        return bool(user.two_factor_count)

    @admin.display(description="Signs in with")
    def signs_in_with(self, user: object) -> str:
        if user.provider_count:
            return "OpenID Connect"
        return "password" if user.has_usable_password() else "LDAP"


admin.site.unregister(User)
admin.site.register(User, VigilUserAdmin)

from __future__ import annotations

from django.contrib import admin

from .models import Account, Region


@admin.register(Account)
class AccountAdmin(admin.ModelAdmin):
    list_display = ["name", "role_arn", "home_region", "enabled", "discovered", "last_error"]
    readonly_fields = ["is_demo", "discovered", "last_error", "last_error_at"]
    fields = ["name", "role_arn", "external_id", "home_region", "enabled", *readonly_fields]


@admin.register(Region)
class RegionAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "kind", "account", "opt_in_status", "enabled"]
    list_filter = ["kind", "opt_in_status", "enabled", "account"]
    list_editable = ["enabled"]
    search_fields = ["code", "name"]

from __future__ import annotations

from django.contrib import admin

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

from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from apps.lib.keep import HistoryAdmin, KeepHistoryAdmin

from .models import Array, Host, Member


@admin.register(Host)
class HostAdmin(KeepHistoryAdmin, admin.ModelAdmin):
    list_display = ["name", "region", "collection", "enabled", "last_report", "last_error"]
    list_filter = ["collection", "enabled", "region"]
    search_fields = ["name", "ssh_address"]
    readonly_fields = [
        "page",
        "token_hint",
        "is_demo",
        "last_report",
        "last_error",
        "last_error_at",
    ]
    fieldsets = [
        (None, {"fields": ["name", "region", "collection", "enabled", "interval_s", "page"]}),
        ("SSH", {"fields": ["ssh_address", "ssh_port", "ssh_user", "known_hosts"]}),
        ("Failure domains", {"fields": ["domain_rules", "domain_noun"]}),
        ("Push", {"fields": ["token_hint"]}),
        ("Collection", {"fields": ["is_demo", "last_report", "last_error", "last_error_at"]}),
    ]

    @admin.display(description="Host page")
    def page(self, obj: Host) -> str:
        if obj.pk is None:
            return "—"
        url = reverse("raid:host_detail", args=[obj.pk])
        return format_html('<a href="{}">{}</a> (issue a push token there)', url, url)


class MemberInline(admin.TabularInline):
    model = Member
    fields = ["device", "role", "slot", "flags", "state", "domain", "is_array"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: object, obj: object = None) -> bool:
        return False


@admin.register(Array)
class ArrayAdmin(HistoryAdmin, admin.ModelAdmin):
    """Arrays come from reports and go by their retention once gone (never by hand: a host's
    arrays and their status changes keep it from being deleted)."""

    list_display = ["__str__", "level", "state", "status", "present", "sync_percent", "headroom"]
    list_filter = ["status", "present", "level", "region"]
    search_fields = ["name", "host__name"]
    inlines = [MemberInline]

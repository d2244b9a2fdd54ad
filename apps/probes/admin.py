from __future__ import annotations

from django.contrib import admin
from django.db import models

from apps.lib.keep import HistoryAdmin, KeepHistoryAdmin

from .models import TARGET_FIELDS, Result, Target


@admin.register(Target)
class TargetAdmin(KeepHistoryAdmin, admin.ModelAdmin):
    # A URL typed without a scheme means https:// (Django 6's default; 5.2 warns otherwise).
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    list_display = ["__str__", "url", "region", "status", "enabled", "interval_s", "next_due"]
    list_filter = ["enabled", "status", "region"]
    search_fields = ["name", "url"]
    readonly_fields = ["status", "reason", "status_changed", "created"]
    fields = [*TARGET_FIELDS, *readonly_fields]


@admin.register(Result)
class ResultAdmin(HistoryAdmin, admin.ModelAdmin):
    list_display = ["target", "started_at", "status", "status_code", "idle_timeout_s", "error"]
    list_filter = ["status", "target__region"]
    date_hierarchy = "started_at"

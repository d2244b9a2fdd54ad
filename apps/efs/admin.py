from __future__ import annotations

from django.contrib import admin

from .models import FileSystem, RegionCollection


@admin.register(FileSystem)
class FileSystemAdmin(admin.ModelAdmin):
    list_display = ["filesystem_id", "name", "region", "throughput_mode", "status", "deleted"]
    list_filter = ["status", "throughput_mode", "performance_mode", "region"]
    search_fields = ["filesystem_id", "name"]
    readonly_fields = [f.name for f in FileSystem._meta.fields if f.name != "id"]


@admin.register(RegionCollection)
class RegionCollectionAdmin(admin.ModelAdmin):
    list_display = [
        "region",
        "next_due",
        "last_success",
        "last_error",
        "api_calls",
        "dropped_values",
    ]
    readonly_fields = RegionCollection.OUTCOME_FIELDS

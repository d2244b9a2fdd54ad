from __future__ import annotations

from django.contrib import admin

from apps.lib.keep import KeepHistoryAdmin

from .models import ClientKey, FileSystem, NfsClient, RegionCollection


@admin.register(FileSystem)
class FileSystemAdmin(KeepHistoryAdmin, admin.ModelAdmin):
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


@admin.register(ClientKey)
class ClientKeyAdmin(admin.ModelAdmin):
    list_display = ["name", "token_hint", "created"]
    readonly_fields = ["token_hint", "created"]
    exclude = ["token_lookup", "token_hash"]


@admin.register(NfsClient)
class NfsClientAdmin(admin.ModelAdmin):
    list_display = ["identity", "hostname", "instance_id", "last_push"]
    search_fields = ["identity", "hostname", "instance_id"]
    readonly_fields = [f.name for f in NfsClient._meta.fields if f.name != "id"]

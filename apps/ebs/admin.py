from __future__ import annotations

from django.contrib import admin

from apps.lib.keep import KeepHistoryAdmin

from .models import HostLink, Instance, RegionCollection, Volume


@admin.register(Volume)
class VolumeAdmin(KeepHistoryAdmin, admin.ModelAdmin):
    list_display = ["volume_id", "name", "region", "volume_type", "size_gib", "status", "deleted"]
    list_filter = ["status", "volume_type", "region"]
    search_fields = ["volume_id", "name"]
    readonly_fields = [f.name for f in Volume._meta.fields if f.name != "id"]


@admin.register(Instance)
class InstanceAdmin(admin.ModelAdmin):
    list_display = ["instance_id", "name", "region", "instance_type", "state", "deleted"]
    list_filter = ["region", "instance_type"]
    search_fields = ["instance_id", "name"]
    readonly_fields = [f.name for f in Instance._meta.fields if f.name != "id"]


@admin.register(RegionCollection)
class RegionCollectionAdmin(admin.ModelAdmin):
    list_display = ["region", "next_due", "last_success", "last_error", "api_calls", "floor_calls"]
    readonly_fields = RegionCollection.OUTCOME_FIELDS


@admin.register(HostLink)
class HostLinkAdmin(admin.ModelAdmin):
    """Where matching by private address or Name tag does not find a host's instance."""

    list_display = ["__str__", "galera_node", "raid_host", "domain", "instance_id"]
    raw_id_fields = ["galera_node", "raid_host"]

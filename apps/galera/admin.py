from __future__ import annotations

from django.contrib import admin

from apps.lib.keep import KeepHistoryAdmin

from .forms import NODE_FIELDS, NodeForm
from .models import CLUSTER_FIELDS, Cluster, Node


class NodeInline(admin.TabularInline):
    model = Node
    form = NodeForm
    extra = 1
    fields = NODE_FIELDS


@admin.register(Cluster)
class ClusterAdmin(KeepHistoryAdmin, admin.ModelAdmin):
    list_display = ["name", "region", "status", "cluster_size", "expected_data_nodes", "enabled"]
    list_filter = ["region", "status", "enabled"]
    search_fields = ["name"]
    fields = [*CLUSTER_FIELDS, "next_due"]
    inlines = [NodeInline]

from __future__ import annotations

from django.contrib import admin

from .models import Cluster, Node


class NodeInline(admin.TabularInline):
    model = Node
    extra = 1
    fields = [
        "name",
        "host",
        "port",
        "user",
        "password_env",
        "password_file",
        "tls",
        "tls_ca",
        "tls_verify",
    ]


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    list_display = ["name", "region", "status", "cluster_size", "expected_data_nodes", "enabled"]
    list_filter = ["region", "status", "enabled"]
    search_fields = ["name"]
    fields = [
        "name",
        "region",
        "expected_data_nodes",
        "expected_arbitrators",
        "interval_s",
        "enabled",
        "next_due",
    ]
    inlines = [NodeInline]

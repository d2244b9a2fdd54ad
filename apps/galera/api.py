"""Galera clusters and nodes (read-write), and their poll snapshots (read-only).

A node's password is never stored, and the API never returns where it comes from either:
``password_env`` / ``password_file`` are write-only, ``password_source`` says only which
kind is set.
"""

from __future__ import annotations

import django_filters
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers, viewsets

from apps.accounts.conditional import AppendOnlyList, ConditionalGet
from apps.accounts.lists import FilterSet, IdFilter, RegionFilter, SinceUntilFilterSet
from apps.regions.models import STATUS_CHOICES, Region

from .models import Cluster, Node, Snapshot, validate_password_env, validate_password_file
from .views import headroom_words


class ClusterSerializer(serializers.ModelSerializer):
    region = serializers.PrimaryKeyRelatedField(queryset=Region.objects.all())
    headroom = serializers.SerializerMethodField(
        help_text='In words, e.g. "can lose 2 more nodes one at a time, 1 at once".'
    )

    class Meta:
        model = Cluster
        fields = [
            "id",
            "name",
            "region",
            "expected_data_nodes",
            "expected_arbitrators",
            "interval_s",
            "enabled",
            "is_demo",
            "next_due",
            "status",
            "reason",
            "status_changed",
            "polled_at",
            "cluster_size",
            "primary",
            "data_nodes",
            "arbitrators",
            "one_by_one",
            "simultaneous",
            "headroom",
            "flow_control_paused",
            "suspect_timeout_s",
            "created",
        ]
        read_only_fields = [
            "is_demo",
            "status",
            "reason",
            "status_changed",
            "polled_at",
            "cluster_size",
            "primary",
            "data_nodes",
            "arbitrators",
            "one_by_one",
            "simultaneous",
            "flow_control_paused",
            "suspect_timeout_s",
            "created",
        ]

    def get_headroom(self, cluster: Cluster) -> str | None:
        return headroom_words(cluster)


class NodeSerializer(serializers.ModelSerializer):
    password_env = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        max_length=100,
        help_text="Name of the environment variable holding the password. Never returned.",
    )
    password_file = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        max_length=500,
        help_text="A file in VIGIL_GALERA_SECRETS_DIR holding the password. Never returned.",
    )
    password_source = serializers.SerializerMethodField(help_text='"env", "file" or "none".')

    class Meta:
        model = Node
        fields = [
            "id",
            "cluster",
            "name",
            "host",
            "port",
            "user",
            "password_env",
            "password_file",
            "password_source",
            "tls",
            "tls_ca",
            "tls_verify",
            "state",
            "detail",
        ]
        read_only_fields = ["state", "detail"]

    def get_password_source(self, node: Node) -> str:
        if node.password_env:
            return "env"
        return "file" if node.password_file else "none"

    def validate_password_env(self, value: str) -> str:
        if value:
            try:
                validate_password_env(value)
            except DjangoValidationError as error:
                raise serializers.ValidationError(error.messages) from None
        return value

    def validate_password_file(self, value: str) -> str:
        if value:
            try:
                validate_password_file(value)
            except DjangoValidationError as error:
                raise serializers.ValidationError(error.messages) from None
        return value

    def validate(self, attrs: dict) -> dict:
        env = attrs.get("password_env", getattr(self.instance, "password_env", ""))
        path = attrs.get("password_file", getattr(self.instance, "password_file", ""))
        if env and path:
            raise serializers.ValidationError(
                "Give the password's environment variable or its file, not both."
            )
        return attrs


class ClusterFilter(FilterSet):
    region = RegionFilter()
    status = django_filters.ChoiceFilter(choices=STATUS_CHOICES)

    class Meta:
        model = Cluster
        fields = ["name", "status", "enabled", "primary"]


class ClusterViewSet(ConditionalGet, viewsets.ModelViewSet):
    """Galera clusters; ``status``, ``reason`` and the size figures come from the last poll."""

    serializer_class = ClusterSerializer
    queryset = Cluster.objects.all()
    filterset_class = ClusterFilter
    ordering_fields = ["id", "name", "status", "status_changed", "polled_at", "created"]
    ordering = ["pk"]


class NodeFilter(FilterSet):
    cluster = IdFilter(help_text="Cluster id")
    region = RegionFilter(field_name="cluster__region")

    class Meta:
        model = Node
        fields = ["host", "port", "state"]


class NodeViewSet(ConditionalGet, viewsets.ModelViewSet):
    """Data nodes polled over MySQL; garbd arbitrators are counted, not configured."""

    serializer_class = NodeSerializer
    queryset = Node.objects.all()
    filterset_class = NodeFilter
    ordering_fields = ["id", "name", "host", "port", "state"]
    ordering = ["pk"]


class SnapshotSerializer(serializers.ModelSerializer):
    class Meta:
        model = Snapshot
        fields = [
            "id",
            "cluster",
            "created",
            "status",
            "reason",
            "cluster_size",
            "primary",
            "data_nodes",
            "arbitrators",
            "one_by_one",
            "simultaneous",
            "split_brain",
            "flow_control_paused",
            "nodes",
        ]


class SnapshotFilter(SinceUntilFilterSet):
    cluster = IdFilter(help_text="Cluster id")
    region = RegionFilter(field_name="cluster__region")
    status = django_filters.ChoiceFilter(choices=STATUS_CHOICES)

    class Meta:
        model = Snapshot
        fields = ["primary", "split_brain"]


class SnapshotViewSet(AppendOnlyList, viewsets.ReadOnlyModelViewSet):
    """One row per poll, newest first: the size history, with each node's state and queues."""

    serializer_class = SnapshotSerializer
    queryset = Snapshot.objects.all()
    filterset_class = SnapshotFilter
    ordering_fields = ["id", "created", "cluster_size", "status"]
    ordering = ["-created", "-pk"]

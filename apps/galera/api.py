"""Galera clusters and nodes (read-write), and their poll snapshots (read-only).

A node's password is never stored, and the API never returns where it comes from either:
``password_env`` / ``password_file`` are write-only, ``password_source`` says only which
kind is set.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers, viewsets

from apps.regions.models import Region

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


REGION = OpenApiParameter("region", int, description="Only this region or site")
CLUSTER = OpenApiParameter("cluster", int, description="Only this cluster")


def _filtered(queryset: QuerySet, params: dict, **lookups: str) -> QuerySet:
    for param, lookup in lookups.items():
        value = params.get(param)
        if value and value.isdigit():
            queryset = queryset.filter(**{lookup: value})
    return queryset


@extend_schema_view(list=extend_schema(parameters=[REGION]))
class ClusterViewSet(viewsets.ModelViewSet):
    """Galera clusters; ``status``, ``reason`` and the size figures come from the last poll."""

    serializer_class = ClusterSerializer

    def get_queryset(self) -> QuerySet[Cluster]:
        clusters = Cluster.objects.order_by("pk")
        return _filtered(clusters, self.request.query_params, region="region_id")


@extend_schema_view(list=extend_schema(parameters=[CLUSTER, REGION]))
class NodeViewSet(viewsets.ModelViewSet):
    """Data nodes polled over MySQL; garbd arbitrators are counted, not configured."""

    serializer_class = NodeSerializer

    def get_queryset(self) -> QuerySet[Node]:
        nodes = Node.objects.order_by("pk")
        params = self.request.query_params
        return _filtered(nodes, params, cluster="cluster_id", region="cluster__region_id")


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


@extend_schema_view(list=extend_schema(parameters=[CLUSTER, REGION]))
class SnapshotViewSet(viewsets.ReadOnlyModelViewSet):
    """One row per poll, newest first: the size history, with each node's state and queues."""

    serializer_class = SnapshotSerializer

    def get_queryset(self) -> QuerySet[Snapshot]:
        snapshots = Snapshot.objects.order_by("-created", "-pk")
        params = self.request.query_params
        return _filtered(snapshots, params, cluster="cluster_id", region="cluster__region_id")

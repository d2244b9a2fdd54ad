"""Probe targets (read-write) and their results (read-only) through the API."""

from __future__ import annotations

from rest_framework import serializers, viewsets

from apps.api.conditional import AppendOnlyList, ConditionalGet
from apps.api.lists import IdFilter, RegionFilter, SinceUntilFilterSet
from apps.api.validation import ModelClean
from apps.regions.api import SubjectThresholds
from apps.regions.models import Region

from .models import TARGET_FIELDS, Result, Target


class TargetSerializer(ModelClean, serializers.ModelSerializer):
    region = serializers.PrimaryKeyRelatedField(queryset=Region.objects.all())

    class Meta:
        model = Target
        fields = [
            "id",
            *TARGET_FIELDS,
            "status",
            "reason",
            "status_changed",
            "created",
        ]
        read_only_fields = ["status", "reason", "status_changed", "created"]


class TargetViewSet(SubjectThresholds, ConditionalGet, viewsets.ModelViewSet):
    """HTTP keep-alive probe targets. ``status`` and ``reason`` come from the last probe."""

    serializer_class = TargetSerializer
    queryset = Target.objects.select_related("region")
    filterset_fields = ["region", "status", "enabled", "url", "name"]
    ordering_fields = ["id", "name", "url", "status", "status_changed", "next_due", "created"]
    ordering = ["pk"]


class ResultSerializer(serializers.ModelSerializer):
    class Meta:
        model = Result
        fields = [
            "id",
            "target",
            "created",
            "started_at",
            "status",
            "reason",
            "status_code",
            "idle_timeout_s",
            "closed_by",
            "closed_with",
            "closed_right_after_response",
            "connection_close_announced",
            "advertised_timeout_s",
            "advertised_timeout_matched",
            "reuse_confirmed",
            "cap_s",
            "dns_s",
            "connect_s",
            "tls_s",
            "first_byte_s",
            "total_s",
            "tls_expires",
            "peer_address",
            "error",
        ]


class ResultFilter(SinceUntilFilterSet):
    target = IdFilter(help_text="Target id")
    region = RegionFilter(field_name="target__region")

    class Meta:
        model = Result
        fields = ["target", "region", "status", "status_code", "closed_by"]


class ResultViewSet(AppendOnlyList, viewsets.ReadOnlyModelViewSet):
    """Every measurement, newest first. ``idle_timeout_s`` is null at the cap or on failure.

    ``since``/``until`` select by ``created``, the time the result was saved."""

    serializer_class = ResultSerializer
    queryset = Result.objects.all()
    filterset_class = ResultFilter
    ordering = ["-created", "-pk"]


#: Read by config/api.py through the concern registry: ``(prefix, viewset, basename)``.
ROUTES = [
    ("probes/targets", TargetViewSet, "probe-target"),
    ("probes/results", ResultViewSet, "probe-result"),
]

"""Probe targets (read-write) and their results (read-only) through the API."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers, viewsets

from apps.regions.models import Region

from .models import Result, Target


class TargetSerializer(serializers.ModelSerializer):
    region = serializers.PrimaryKeyRelatedField(queryset=Region.objects.all())

    class Meta:
        model = Target
        fields = [
            "id",
            "name",
            "url",
            "region",
            "interval_s",
            "expected_min_s",
            "expected_max_s",
            "cap_s",
            "timeout_s",
            "verify_tls",
            "enabled",
            "next_due",
            "status",
            "reason",
            "status_changed",
            "created",
        ]
        read_only_fields = ["status", "reason", "status_changed", "created"]

    def validate_url(self, value: str) -> str:
        if urlsplit(value).scheme not in ("http", "https"):
            raise serializers.ValidationError("Only http:// and https:// URLs can be probed.")
        return value

    def validate(self, attrs: dict) -> dict:
        low = attrs.get("expected_min_s", getattr(self.instance, "expected_min_s", None))
        high = attrs.get("expected_max_s", getattr(self.instance, "expected_max_s", None))
        if (low is None) != (high is None):
            raise serializers.ValidationError(
                "Give both ends of the expected keep-alive range, or neither."
            )
        if low is not None and high is not None and low > high:
            raise serializers.ValidationError("The expected range starts after it ends.")
        return attrs


REGION = OpenApiParameter("region", int, description="Only targets in this region or site")
TARGET = OpenApiParameter("target", int, description="Only results of this target")


@extend_schema_view(list=extend_schema(parameters=[REGION]))
class TargetViewSet(viewsets.ModelViewSet):
    """HTTP keep-alive probe targets. ``status`` and ``reason`` come from the last probe."""

    serializer_class = TargetSerializer

    def get_queryset(self) -> QuerySet[Target]:
        targets = Target.objects.select_related("region").order_by("pk")
        region = self.request.query_params.get("region")
        if region and region.isdigit():
            targets = targets.filter(region_id=region)
        return targets


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


@extend_schema_view(list=extend_schema(parameters=[TARGET, REGION]))
class ResultViewSet(viewsets.ReadOnlyModelViewSet):
    """Every measurement, newest first. ``idle_timeout_s`` is null at the cap or on failure."""

    serializer_class = ResultSerializer

    def get_queryset(self) -> QuerySet[Result]:
        results = Result.objects.order_by("-created", "-pk")
        params = self.request.query_params
        if (target := params.get("target")) and target.isdigit():
            results = results.filter(target_id=target)
        if (region := params.get("region")) and region.isdigit():
            results = results.filter(target__region_id=region)
        return results

"""EBS through the API: volumes (read-only; current figures, series, cost and gp3 advice), the
instances they are attached to, and the links that name a Galera node's or RAID host's
instance (admins write them)."""

from __future__ import annotations

from datetime import timedelta

import django_filters
from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from apps.api.conditional import ConditionalGet
from apps.api.lists import FilterSet, IdFilter, PlainRows
from apps.api.validation import ModelClean

from . import history, pricing
from .metrics import figure_columns
from .models import DESCRIBED_FIELDS, HostLink, Instance, Volume

SERIES_RANGES = {"1h": timedelta(hours=1), "3h": timedelta(hours=3), "24h": timedelta(hours=24)}


class VolumeSerializer(serializers.ModelSerializer):
    account = serializers.IntegerField(source="region.account_id", read_only=True)
    region_code = serializers.CharField(source="region.code", read_only=True)
    instance_id = serializers.CharField(source="instance.instance_id", read_only=True)

    class Meta:
        model = Volume
        fields = [
            "id",
            "volume_id",
            "name",
            "account",
            "region",
            "region_code",
            "instance_id",
            *DESCRIBED_FIELDS,
            "deleted",
            "status",
            "reason",
            "status_changed",
            "collected_until",
            "figures",
        ]
        read_only_fields = fields


class VolumeFilter(FilterSet):
    account = IdFilter(field_name="region__account", help_text="Account id")
    instance = django_filters.CharFilter(
        field_name="instance__instance_id", help_text="EC2 instance id (i-…)"
    )
    deleted = django_filters.BooleanFilter(
        method="filter_deleted", help_text="true: include deleted volumes (hidden otherwise)"
    )

    class Meta:
        model = Volume
        fields = ["region", "status", "volume_id", "name", "volume_type"]

    def filter_queryset(self, queryset: QuerySet[Volume]) -> QuerySet[Volume]:
        if not self.form.cleaned_data.get("deleted"):
            queryset = queryset.filter(deleted__isnull=True)
        return super().filter_queryset(queryset)

    def filter_deleted(self, queryset: QuerySet, name: str, value: bool) -> QuerySet:
        return queryset  # applied in filter_queryset, as hiding is the default


class VolumeViewSet(ConditionalGet, PlainRows, viewsets.ReadOnlyModelViewSet):
    """EBS volumes with their status and current figures (``figures``: IOPS, MiB/s, burst
    balance and when it runs out, the instance's EBS burst balances)."""

    serializer_class = VolumeSerializer
    queryset = Volume.objects.select_related("region", "instance")
    filterset_class = VolumeFilter
    ordering_fields = ["id", "name", "volume_id", "status", "status_changed", "region"]
    ordering = ["region", "name", "volume_id", "pk"]

    @extend_schema(
        parameters=[OpenApiParameter("range", str, enum=list(SERIES_RANGES))],
        responses=OpenApiTypes.OBJECT,
    )
    @action(detail=True)
    def series(self, request: Request, pk: str | None = None, **kwargs: object) -> Response:
        """Per-minute series (IOPS, MiB/s, request size, latency, queue, idle %, burst
        balance) over the last hour, 3 or 24 hours; null is a gap."""
        volume = self.get_object()
        key = request.query_params.get("range") or "3h"
        if key not in SERIES_RANGES:
            raise ValidationError({"range": f"one of {', '.join(SERIES_RANGES)}"})
        now = timezone.now()
        samples = history.volume_samples([volume.pk], now - SERIES_RANGES[key], now)[volume.pk]
        columns = figure_columns(samples)
        return Response(
            {
                "volume": volume.pk,
                "x": [int(s.timestamp.timestamp()) for s in samples],
                **columns,
            }
        )

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True)
    def cost(self, request: Request, pk: str | None = None, **kwargs: object) -> Response:
        """What the volume costs a month, and for gp2 what it would as gp3 provisioned for
        its p95 (dollars; a GB is 2^30 bytes); ``advice`` is null without data or for
        another type."""
        volume = self.get_object()
        c = pricing.cost(volume, timezone.now())
        a = c.advice
        return Response(
            {
                "volume": volume.pk,
                "monthly_usd": None if c.monthly_usd is None else round(c.monthly_usd, 2),
                "prices_region": c.prices_region,
                "prices_note": c.prices_note,
                "advice": None
                if a is None
                else {
                    "gp3_iops": a.iops,
                    "gp3_mibps": a.mibps,
                    "gp2_usd": round(a.gp2_usd, 2),
                    "gp3_usd": round(a.gp3_usd, 2),
                    "saving_usd": round(a.saving_usd, 2),
                    "baseline_covers_peaks": a.baseline_covers_peaks,
                    "baseline_covers_p95": a.baseline_covers_p95,
                    "p95_iops": a.usage.p95_iops,
                    "peak_iops": a.usage.peak_iops,
                    "p95_mibps": a.usage.p95_mibps,
                    "peak_mibps": a.usage.peak_mibps,
                    "minutes": a.usage.minutes,
                    "reason": a.reason,
                },
            }
        )


class InstanceSerializer(serializers.ModelSerializer):
    region_code = serializers.CharField(source="region.code", read_only=True)

    class Meta:
        model = Instance
        fields = [
            "id",
            "instance_id",
            "name",
            "region",
            "region_code",
            "instance_type",
            "state",
            "private_ips",
            "root_device",
            "tags",
            "deleted",
            "figures",
        ]
        read_only_fields = fields


class InstanceViewSet(ConditionalGet, PlainRows, viewsets.ReadOnlyModelViewSet):
    """EC2 instances EBS volumes are attached to; ``figures``: their EBS burst balances."""

    serializer_class = InstanceSerializer
    queryset = Instance.objects.select_related("region")
    filterset_fields = ["region", "instance_id", "name", "instance_type"]
    ordering_fields = ["id", "name", "instance_id", "region"]
    ordering = ["region", "name", "instance_id", "pk"]


class HostLinkSerializer(ModelClean, serializers.ModelSerializer):
    class Meta:
        model = HostLink
        fields = ["id", "galera_node", "raid_host", "domain", "instance_id"]


class HostLinkViewSet(ConditionalGet, viewsets.ModelViewSet):
    """Names the EC2 instance of a Galera node, a RAID host, or a RAID host's failure domain
    (``domain``), where Vigil cannot match it by private address or Name tag."""

    serializer_class = HostLinkSerializer
    queryset = HostLink.objects.all()
    filterset_fields = ["galera_node", "raid_host", "instance_id"]
    ordering_fields = ["id"]
    ordering = ["pk"]


#: Read by config/api.py through the concern registry: ``(prefix, viewset, basename)``.
ROUTES = [
    ("ebs/volumes", VolumeViewSet, "ebs-volume"),
    ("ebs/instances", InstanceViewSet, "ebs-instance"),
    ("ebs/host-links", HostLinkViewSet, "ebs-hostlink"),
]

"""EFS file systems through the API (read-only): list with filters, current figures, series."""

from __future__ import annotations

from datetime import datetime, timedelta

import django_filters
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.conditional import ConditionalGet
from apps.accounts.lists import FilterSet, IdFilter, RegionFilter, as_utc
from apps.regions.models import STATUS_CHOICES

from . import charts, history
from .models import FileSystem

MAX_POINTS = 20_000


class FileSystemSerializer(serializers.ModelSerializer):
    account = serializers.IntegerField(source="region.account_id", read_only=True)
    region_code = serializers.CharField(source="region.code", read_only=True)

    class Meta:
        model = FileSystem
        fields = [
            "id",
            "filesystem_id",
            "name",
            "account",
            "region",
            "region_code",
            "performance_mode",
            "throughput_mode",
            "provisioned_mibps",
            "size_total_bytes",
            "size_standard_bytes",
            "size_ia_bytes",
            "tags",
            "created_at",
            "deleted",
            "status",
            "reason",
            "status_changed",
            "collected_until",
            "backfill_from",
            "backfill_to",
            "last_error",
            "figures",
        ]
        read_only_fields = fields


class FileSystemFilter(FilterSet):
    account = IdFilter(field_name="region__account", help_text="Account id")
    region = RegionFilter()
    status = django_filters.ChoiceFilter(choices=STATUS_CHOICES)
    deleted = django_filters.BooleanFilter(
        method="filter_deleted", help_text="true: include deleted file systems (hidden otherwise)"
    )

    class Meta:
        model = FileSystem
        fields = ["filesystem_id", "name", "performance_mode", "throughput_mode"]

    def filter_queryset(self, queryset: QuerySet[FileSystem]) -> QuerySet[FileSystem]:
        if not self.form.cleaned_data.get("deleted"):
            queryset = queryset.filter(deleted__isnull=True)
        return super().filter_queryset(queryset)

    def filter_deleted(self, queryset: QuerySet, name: str, value: bool) -> QuerySet:
        return queryset  # applied in filter_queryset, as hiding is the default


class FileSystemViewSet(ConditionalGet, viewsets.ReadOnlyModelViewSet):
    """EFS file systems with their status and current figures (``figures``)."""

    serializer_class = FileSystemSerializer
    queryset = FileSystem.objects.select_related("region")
    filterset_class = FileSystemFilter
    ordering_fields = ["id", "name", "filesystem_id", "status", "status_changed", "region"]
    ordering = ["region", "name", "filesystem_id", "pk"]

    @extend_schema(
        parameters=[
            OpenApiParameter("start", OpenApiTypes.DATETIME, description="Default: 3 h ago"),
            OpenApiParameter("end", OpenApiTypes.DATETIME, description="Default: now"),
            OpenApiParameter("resolution", str, enum=["minute", "hour"]),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    @action(detail=True)
    def series(self, request: Request, pk: str | None = None, **kwargs: object) -> Response:
        """Derived series (ops/s, MiB/s, IO-limit %, credits, ...) over a range; null is a gap."""
        fs = self.get_object()
        now = timezone.now()
        end = _when(request.query_params.get("end"), "end") or now
        start = _when(request.query_params.get("start"), "start") or end - timedelta(hours=3)
        if start >= end:
            raise ValidationError({"start": "must be before end"})
        resolution = request.query_params.get("resolution") or history.resolution_for(
            start, end, now
        )
        if resolution not in history.RESOLUTIONS:
            raise ValidationError({"resolution": "minute or hour"})
        step = timedelta(minutes=1) if resolution == history.MINUTE else timedelta(hours=1)
        if (end - start) / step > MAX_POINTS:
            raise ValidationError({"resolution": f"more than {MAX_POINTS} points; use hour"})
        samples = history.load_samples([fs.pk], start, end, resolution)[fs.pk]
        data = charts.series(samples, start, end, step)
        return Response({"filesystem": fs.pk, "resolution": resolution, **data})


def _when(value: str | None, name: str) -> datetime | None:
    if not value:
        return None
    try:
        parsed = parse_datetime(value)
    except ValueError:  # well formed, but not a date (month 13)
        parsed = None
    if parsed is None:
        raise ValidationError({name: "an ISO 8601 date-time"})
    return as_utc(parsed if parsed.tzinfo else timezone.make_aware(parsed, timezone.UTC), name)

"""EFS file systems through the API (read-only): list with filters, current figures, series."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

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


FILTERS = [
    OpenApiParameter("account", int, description="Account id"),
    OpenApiParameter("region", str, description="Region code, e.g. eu-west-1"),
    OpenApiParameter("status", str, enum=["ok", "warning", "critical", "unknown"]),
    OpenApiParameter("deleted", bool, description="Include deleted file systems"),
]


@extend_schema_view(list=extend_schema(parameters=FILTERS))
class FileSystemViewSet(viewsets.ReadOnlyModelViewSet):
    """EFS file systems with their status and current figures (``figures``)."""

    serializer_class = FileSystemSerializer

    def get_queryset(self) -> QuerySet[FileSystem]:
        qs = FileSystem.objects.select_related("region")
        params = self.request.query_params
        if params.get("deleted", "").lower() not in ("1", "true", "yes"):
            qs = qs.filter(deleted__isnull=True)
        if params.get("account"):
            if not params["account"].isdigit():
                raise ValidationError({"account": "an account id"})
            qs = qs.filter(region__account_id=int(params["account"]))
        if params.get("region"):
            qs = qs.filter(region__code=params["region"])
        if params.get("status"):
            qs = qs.filter(status=params["status"])
        return qs

    @extend_schema(
        parameters=[
            OpenApiParameter("start", OpenApiTypes.DATETIME, description="Default: 3 h ago"),
            OpenApiParameter("end", OpenApiTypes.DATETIME, description="Default: now"),
            OpenApiParameter("resolution", str, enum=["minute", "hour"]),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    @action(detail=True)
    def series(self, request: Request, pk: str | None = None) -> Response:
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
    parsed = parse_datetime(value)
    if parsed is None:
        raise ValidationError({name: "an ISO 8601 date-time"})
    return parsed if parsed.tzinfo else timezone.make_aware(parsed, timezone.UTC)

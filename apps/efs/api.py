"""EFS file systems through the API (read-only): list with filters, current figures (the
stored mode comparison among them: ``cost_*``), series, and the live mode comparison.

``POST /api/efs/clients/report`` takes an NFS client's push (agents/vigil-nfs-push): JSON
``{"hostname", "instance_id", "mountstats", "lookups", "locks"}``, authenticated by a fleet's
client key (``Authorization: Bearer vgc_…``, ``manage.py efs_client_key``) or a read-write API
key of an admin (``efs.add_nfsclient``). The body is read with ``apps.lib.bodies`` (at most
``VIGIL_PUSH_MAX_BYTES``); an unreadable push is answered 400 and nothing is stored."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import django_filters
from django.conf import settings
from django.db.models import QuerySet
from django.urls import re_path
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, viewsets
from rest_framework.decorators import action, throttle_classes
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.permissions import RolePermissions
from apps.api.conditional import CachedList
from apps.api.lists import FilterSet, IdFilter, PlainRows, as_utc
from apps.api.push import push_endpoint, token_scheme
from apps.api.throttling import UserWriteThrottle, WriteThrottle
from apps.lib.bodies import BodyRefused, read_payload
from apps.lib.pushtoken import PushToken, PushTokenAuthentication
from apps.regions.api import SubjectThresholds

from . import charts, client_history, client_push, history, pricing
from .models import DESCRIBED_FIELDS, ClientKey, FileSystem

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
            *DESCRIBED_FIELDS,
            "replicas",
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
    deleted = django_filters.BooleanFilter(
        method="filter_deleted", help_text="true: include deleted file systems (hidden otherwise)"
    )

    class Meta:
        model = FileSystem
        fields = [
            "region",
            "status",
            "filesystem_id",
            "name",
            "performance_mode",
            "throughput_mode",
        ]

    def filter_queryset(self, queryset: QuerySet[FileSystem]) -> QuerySet[FileSystem]:
        if not self.form.cleaned_data.get("deleted"):
            queryset = queryset.filter(deleted__isnull=True)
        return super().filter_queryset(queryset)

    def filter_deleted(self, queryset: QuerySet, name: str, value: bool) -> QuerySet:
        return queryset  # applied in filter_queryset, as hiding is the default


class FileSystemViewSet(SubjectThresholds, CachedList, PlainRows, viewsets.ReadOnlyModelViewSet):
    """EFS file systems with their status and current figures (``figures``)."""

    serializer_class = FileSystemSerializer
    queryset = FileSystem.objects.select_related("region")
    filterset_class = FileSystemFilter
    ordering_fields = ["id", "name", "filesystem_id", "status", "status_changed", "region"]
    ordering = ["region", "name", "filesystem_id", "pk"]
    versioned_table = FileSystem._meta.db_table  # apps.efs.apps watches it

    def list_validator(self) -> tuple:
        """The newest write to any file system, one lookup on the ``changed`` index (triggers
        keep it: every insert and update, and a deletion touches a surviving row)."""
        return (FileSystem.objects.order_by("-changed").values_list("changed", flat=True).first(),)

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

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "provision",
                str,
                enum=["p95", "peak"],
                description="Provisioned at the peak (default) or the p95",
            ),
            OpenApiParameter(
                "price",
                OpenApiTypes.NUMBER,
                description="Dollars per provisioned MiB/s-month (default: the price table)",
            ),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    @action(detail=True)
    def modes(self, request: Request, pk: str | None = None, **kwargs: object) -> Response:
        """What the file system would cost a month in each throughput mode (cheapest first,
        dollars; a GB is 2^30 bytes) and whether each would have carried the last 30 days'
        p95 and peak (provisioned at the peak unless ``provision=p95``); ``comparison`` is null
        with less than an hour of data."""
        fs = self.get_object()
        provision = request.query_params.get("provision") or "peak"
        if provision not in ("p95", "peak"):
            raise ValidationError({"provision": "p95 or peak"})
        price = None
        if (raw := request.query_params.get("price")) not in (None, ""):
            try:
                price = float(raw)
            except ValueError:
                price = -1.0
            if not 0 <= price < 10_000:
                raise ValidationError({"price": "dollars per MiB/s-month, 0 to 10,000"})
        c = pricing.comparisons(
            [fs], timezone.now(), provision=provision, price_per_mibps=price
        ).get(fs.pk)
        return Response({"filesystem": fs.pk, "comparison": None if c is None else _comparison(c)})

    @extend_schema(
        parameters=[
            OpenApiParameter("start", OpenApiTypes.DATETIME, description="Default: 24 h ago"),
            OpenApiParameter("end", OpenApiTypes.DATETIME, description="Default: now"),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    @action(detail=True)
    def clients(self, request: Request, pk: str | None = None, **kwargs: object) -> Response:
        """Which client, over a range: the NFS clients' totals (bytes, operations, RTT and
        execute milliseconds, retransmissions, timeouts) and shares, the top 20 first and the
        rest summed; each top client's operations by name (READ, WRITE, GETATTR, LOOKUP, ...)
        since mounted, with their average round-trip and execution times; the clients' sums beside CloudWatch's; the metered range; stale clients;
        mount options against AWS's; slow lookups and locks that did not come."""
        fs = self.get_object()
        now = timezone.now()
        end = _when(request.query_params.get("end"), "end") or now
        start = _when(request.query_params.get("start"), "start") or end - timedelta(hours=24)
        if start >= end:
            raise ValidationError({"start": "must be before end"})
        c = client_history.client_shares(fs, start, end, now)
        return Response(
            {
                "filesystem": fs.pk,
                "start": start,
                "end": end,
                "counted_from": c["start"],  # both sums', CloudWatch's too
                "clients": c["clients"],
                "rows": [
                    {
                        "client": r.client_id,
                        "name": r.name,
                        "clients": r.clients,
                        "stale": r.stale,
                        "last_push": r.last_push,
                        "totals": r.totals,
                        "share": r.share,
                        "per_op": r.per_op,
                        "operations": r.operations,
                    }
                    for r in c["rows"]
                ],
                "totals": c["totals"],
                "cloudwatch": c["cloudwatch"],
                "cloudwatch_until": c["cloudwatch_until"],  # its newest settled period's end
                "totals_to_cloudwatch_until": c["compared"],  # the clients', to compare
                "metered_bytes_range": [c["metered_low"], c["metered_high"]],
                "stale": [r.name for r in c["stale"]],
                "option_findings": [
                    {**vars(g["finding"]), "mounts": g["mounts"], "clients": g["names"]}
                    for g in c["findings"]
                ],
                "slow_lookups": c["slow_lookups"],
                "failed_locks": c["failed_locks"],
            }
        )


def _comparison(c) -> dict:
    w = c.workload
    best = c.best
    return {
        "modes": [
            {
                "mode": r.mode,
                "monthly_usd": round(r.monthly_usd, 2),
                "fits": r.fits,
                "available": r.available,
                "storage_usd": round(r.storage_usd, 2),
                "throughput_usd": round(r.throughput_usd, 2),
                "provisioned_mibps": r.provisioned_mibps,
            }
            for r in c.rows
        ],
        "best_mode": best.mode if best else None,
        "current_mode": c.current_mode,
        "current_usd": None if c.current_usd is None else round(c.current_usd, 2),
        "saving_usd": None if c.saving_usd is None else round(c.saving_usd, 2),
        "reason": c.reason,
        "provision": c.provision,
        "prices_region": c.prices_region,
        "prices_note": c.prices_note,
        "notes": list(c.notes),
        "workload": {
            "hours_of_data": round(w.hours_of_data, 1),
            "read_gb_month": round(w.read_gib, 1),
            "write_gb_month": round(w.write_gib, 1),
            "mean_mibps": w.mean_mibps,
            "p95_mibps": w.p95_mibps,
            "peak_mibps": w.peak_mibps,
            "standard_gb": w.standard_gib,
            "ia_gb": w.ia_gib,
            "archive_gb": w.archive_gib,
        },
    }


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


# --- NFS clients' push -----------------------------------------------------------------------


class ClientKeyAuthentication(PushTokenAuthentication):
    """``Authorization: Bearer vgc_…``: a fleet's key, which may only push NFS clients' stats."""

    model = ClientKey
    refused = "Invalid or replaced EFS client key"


ClientKeyScheme = token_scheme(
    ClientKeyAuthentication,
    "efsClientKey",
    "A fleet's EFS client key (vgc_…), printed once by manage.py efs_client_key.",
)


class CanPushClient(RolePermissions):
    """A client key, or a read-write API key (or session) holding ``efs.add_nfsclient``."""

    perms = ("efs.add_nfsclient",)

    def has_permission(self, request: Request, view: object) -> bool:
        if isinstance(request.auth, PushToken):
            return isinstance(request.auth.subject, ClientKey)
        return super().has_permission(request, view)


def _client_key(request: Request) -> ClientKey | None:
    auth = request.auth
    return (
        auth.subject
        if isinstance(auth, PushToken) and isinstance(auth.subject, ClientKey)
        else None
    )


class ClientKeyThrottle(WriteThrottle):
    """A fleet's key: ``VIGIL_EFS_CLIENT_PUSH_RATE`` for all its clients together."""

    scope = "efs_client_push"

    def get_rate(self) -> str | None:
        return settings.VIGIL_EFS_CLIENT_PUSH_RATE

    def identity(self, request: Request) -> str | None:
        key = _client_key(request)
        return None if key is None else f"clientkey:{key.pk}"


class WriteThrottleUnlessClientKey(WriteThrottle):
    """The API's write budget for API keys and sessions; a client key has its own."""

    def identity(self, request: Request) -> str | None:
        return None if _client_key(request) else super().identity(request)


@push_endpoint(
    authentication=ClientKeyAuthentication,
    permission=CanPushClient,
    request=inline_serializer(
        "EfsClientReport",
        {
            "hostname": serializers.CharField(),
            "instance_id": serializers.CharField(required=False, help_text="i-…"),
            "mountstats": serializers.CharField(help_text="/proc/self/mountstats"),
            "lookups": serializers.ListField(child=serializers.DictField(), required=False),
            "locks": serializers.ListField(child=serializers.DictField(), required=False),
        },
    ),
    accepted=inline_serializer(
        "EfsClientReportAccepted",
        {
            "client": serializers.IntegerField(),
            "mounts": serializers.IntegerField(),
            "attributed": serializers.IntegerField(),
            "samples": serializers.IntegerField(),
        },
    ),
    conflict="Never (kept for the push endpoints' common answers)",
    description="Push an NFS client's /proc/self/mountstats (what agents/vigil-nfs-push sends), "
    "its identity, its timed lookups of the NFS servers and efs-utils' tunnels (file system id, "
    "local port, mount point). Mounts of EFS file systems Vigil knows are tied to them; counters become increases since the client's last push.",
)
@throttle_classes([ClientKeyThrottle, WriteThrottleUnlessClientKey, UserWriteThrottle])
def client_report(request: Request) -> Response:
    try:
        payload = read_payload(request, settings.VIGIL_PUSH_MAX_BYTES)
        read = client_push.read_push(payload)
        tunnels = client_push.read_tunnels(payload)
    except BodyRefused as exc:
        return Response({"error": str(exc)}, status=exc.status)
    except client_push.PushRefused as exc:
        return Response({"error": str(exc)}, status=400)
    stored = client_push.store(*read, now=timezone.now(), key=_client_key(request), tunnels=tunnels)
    body: dict[str, Any] = {
        "client": stored.client.pk,
        "mounts": stored.mounts,
        "attributed": stored.attributed,
        "samples": stored.samples,
    }
    return Response(body)


#: Read by config/api.py through the concern registry: ``(prefix, viewset, basename)``.
ROUTES = [("efs/filesystems", FileSystemViewSet, "efs-filesystem")]
URLS = [re_path(r"^efs/clients/report/?$", client_report, name="efs-client-report")]

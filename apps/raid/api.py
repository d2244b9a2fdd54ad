"""md-RAID through the API: hosts, arrays, members, history (read), and the push report.

``POST /api/raid/hosts/<id>/report`` takes ``{"mdstat": "...", "details": {"md0": "..."},
"sysfs": "..."}`` (``sysfs``: grep's ``/sys/block/md0/md/array_state:clean`` lines; or the
bare /proc/mdstat text as ``text/plain``), authenticated by the host's own token
(``Authorization: Bearer vgh_…``) or a read-write API key of someone who may change RAID hosts
(``raid.change_host``: an admin). A report that is not /proc/mdstat, or beyond a bound, is
answered 400 naming the line, and nothing is stored; one array's odd line makes that array
unknown. The body is read with ``apps.lib.bodies`` (at most ``VIGIL_PUSH_MAX_BYTES``, 413
beyond), never through DRF's unbounded ``request.data``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import django_filters
from django.conf import settings
from django.db.models import QuerySet
from django.urls import re_path
from django.utils import timezone
from drf_spectacular.utils import inline_serializer
from rest_framework import serializers, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from apps.alerts.models import Transition
from apps.api.conditional import AppendOnlyList, ConditionalGet
from apps.api.lists import FilterSet, IdFilter, RegionFilter, SinceUntilFilterSet
from apps.api.push import CanPush, push_endpoint, token_scheme
from apps.lib.bodies import BodyRefused, read_payload
from apps.lib.pushtoken import PushTokenAuthentication
from apps.regions.api import SubjectThresholds
from apps.regions.models import STATUS_CHOICES

from .collect import TooManyArrays, ingest
from .errors import ParseError
from .models import COUNTERS, Array, Disk, DiskReading, Host, Member
from .report import ARRAY_FACT_FIELDS

MAX_DETAILS = 256
MAX_SMART = 4096  # disks in one report (bounds.MAX_DEVICES)
CLOCK_SLACK = timedelta(minutes=10)  # how far a host's reading time may be from Vigil's


# --- push ------------------------------------------------------------------------------------


class HostTokenAuthentication(PushTokenAuthentication):
    """``Authorization: Bearer vgh_…``: a token that may only push one host's report."""

    model = Host
    refused = "Invalid or replaced host token"


HostTokenScheme = token_scheme(
    HostTokenAuthentication,
    "hostToken",
    "A host's own push token (vgh_…), shown once on the host page.",
)


class CanPushReport(CanPush):
    """A host's own token, or a read-write API key (or session) holding ``raid.change_host``."""

    subject = Host
    noun = "host"
    perms = ("raid.change_host",)


def _report_fields(data: object) -> tuple[str, dict[str, str], str | None]:
    """The md texts of a report; ValueError saying what is wrong with its shape."""
    if not isinstance(data, dict):
        raise ValueError("Send a JSON object with 'mdstat' and optional 'details'")
    mdstat = data.get("mdstat")
    if not isinstance(mdstat, str) or not mdstat.strip():
        raise ValueError("'mdstat' must be the text of /proc/mdstat")
    details = data.get("details") or {}
    if not isinstance(details, dict) or len(details) > MAX_DETAILS:
        raise ValueError("'details' must map array names to mdadm --detail texts")
    for name, text in details.items():
        if not isinstance(text, str):
            raise ValueError(f"'details' for {name!r} must be text")
    sysfs = data.get("sysfs")
    if sysfs is not None and not isinstance(sysfs, str):
        raise ValueError("'sysfs' must be the text grep prints of array_state and sync_action")
    return mdstat, details, sysfs


def _disk_fields(data: dict[str, Any]) -> dict[str, Any]:
    """The disk texts of a report (``smart``, ``devlinks``) and when the host read them
    (``read_at``, Unix seconds; ignored when more than ``CLOCK_SLACK`` from Vigil's clock)."""
    smart = data.get("smart")
    if smart is not None:
        if not isinstance(smart, dict) or len(smart) > MAX_SMART:
            raise ValueError("'smart' must map disk names to smartctl --json -a texts")
        for name, text in smart.items():
            if not isinstance(text, str):
                raise ValueError(f"'smart' for {name!r} must be text")
    devlinks = data.get("devlinks")
    if devlinks is not None and not isinstance(devlinks, str):
        raise ValueError("'devlinks' must be the lines of /dev/disk/by-id and by-path")
    read_at = None
    stamp = data.get("read_at")
    if stamp is not None:
        if isinstance(stamp, bool) or not isinstance(stamp, int | float) or not 0 < stamp < 2**34:
            raise ValueError("'read_at' must be the reading's time in Unix seconds")
        moment = datetime.fromtimestamp(stamp, tz=UTC)
        if abs(moment - timezone.now()) <= CLOCK_SLACK:
            read_at = moment
    return {"smart": smart, "devlinks": devlinks, "read_at": read_at}


@push_endpoint(
    authentication=HostTokenAuthentication,
    permission=CanPushReport,
    request=inline_serializer(
        "RaidReport",
        {
            "mdstat": serializers.CharField(help_text="The text of /proc/mdstat"),
            "details": serializers.DictField(
                child=serializers.CharField(),
                required=False,
                help_text="Array name (md0) -> the output of mdadm --detail /dev/md0",
            ),
            "sysfs": serializers.CharField(
                required=False,
                help_text="What `grep -s . /sys/block/md0/md/array_state "
                "/sys/block/md0/md/sync_action /sys/block/md0/md/last_sync_action "
                "/sys/block/md0/md/mismatch_cnt ...` prints: one "
                "'/sys/block/md0/md/sync_action:repair' line per file. Optional; it tells a "
                "repair from a resync, a broken RAID-0 on kernels whose /proc/mdstat "
                "still says active, and when checks ran and what they found.",
            ),
            "smart": serializers.DictField(
                child=serializers.CharField(),
                required=False,
                help_text="Disk name (sdc) -> what `smartctl --json -a /dev/sdc` printed "
                "(smartmontools 7+), for the disks under the arrays. Optional.",
            ),
            "devlinks": serializers.CharField(
                required=False,
                help_text="'/dev/disk/by-id/NAME -> ../../sdc' lines (and by-path): the "
                "disks' stable names and iSCSI targets. Optional.",
            ),
            "read_at": serializers.IntegerField(
                required=False,
                help_text="When the host read all this, in Unix seconds (the report's "
                "arrival when absent or more than 10 minutes off).",
            ),
        },
    ),
    accepted=inline_serializer(
        "RaidReportAccepted",
        {
            "host": serializers.CharField(),
            "arrays": serializers.DictField(child=serializers.CharField()),
            "transitions": serializers.IntegerField(),
        },
    ),
    conflict="The host is disabled, or the report would give it more arrays than "
    "VIGIL_RAID_MAX_ARRAYS_PER_HOST (present and gone ones together; nothing is stored)",
    description="Push a host's /proc/mdstat (and optionally mdadm --detail per array, the "
    "arrays' sysfs files, smartctl --json -a per disk and the disks' by-id and by-path "
    "links). Authenticate with the host's token (Bearer "
    "vgh_…) or a read-write API key of an admin (raid.change_host). A text that is not "
    "/proc/mdstat, or beyond a bound, is answered 400 with the line that could not be read; "
    "nothing is stored then. One array's odd line makes only that array unknown. A body over "
    "VIGIL_PUSH_MAX_BYTES (1 MiB) is answered 413 without being read.",
)
def report(request: Request, pk: str) -> Response:
    host = Host.objects.select_related("region").filter(pk=pk).first()
    if host is None:
        return Response({"error": f"No RAID host with id {pk}"}, status=404)
    if not host.enabled:
        return Response({"error": f"Host {host.name} is disabled"}, status=409)
    try:
        payload = read_payload(request, settings.VIGIL_PUSH_MAX_BYTES, text_field="mdstat")
        mdstat, details, sysfs = _report_fields(payload)
        disks = _disk_fields(payload)  # type: ignore[arg-type]  # a dict: checked above
    except BodyRefused as exc:
        return Response({"error": str(exc)}, status=exc.status)
    except ValueError as exc:
        return Response({"error": str(exc)}, status=400)
    try:
        transitions = ingest(host, mdstat, details, sysfs, **disks)
    except ParseError as exc:
        host.collection_failed(f"report rejected: {exc}")
        return Response({"error": str(exc), "line": exc.line_number}, status=400)
    except TooManyArrays as exc:
        host.collection_failed(str(exc))
        return Response({"error": str(exc)}, status=409)
    statuses = dict(host.arrays.filter(present=True).values_list("name", "status"))
    return Response({"host": host.name, "arrays": statuses, "transitions": len(transitions)})


# --- read ------------------------------------------------------------------------------------


class HostSerializer(serializers.ModelSerializer):
    status = serializers.CharField(read_only=True)
    token = serializers.CharField(source="token_hint", read_only=True)

    class Meta:
        model = Host
        fields = [
            "id",
            "name",
            "region",
            "collection",
            "ssh_address",
            "ssh_port",
            "ssh_user",
            "domain_rules",
            "domain_noun",
            "interval_s",
            "enabled",
            "is_demo",
            "status",
            "last_report",
            "last_error",
            "last_error_at",
            "token",
            "created",
        ]


class HostViewSet(ConditionalGet, viewsets.ReadOnlyModelViewSet):
    """Hosts with md arrays. ``status`` is the worst of its arrays; ``token`` is only a hint.

    A host is addressed by its id, like every other subject (``/api/raid/hosts/<id>/``, the push
    URL, ``?host=<id>``); this changed: it was its name before."""

    serializer_class = HostSerializer
    queryset = Host.objects.prefetch_related("arrays")
    filterset_fields = ["name", "region", "collection", "enabled"]
    ordering_fields = ["id", "name", "last_report", "created"]
    ordering = ["name", "pk"]


class MemberSerializer(serializers.ModelSerializer):
    class Meta:
        model = Member
        fields = [
            "id",
            "array",
            "device",
            "role",
            "slot",
            "flags",
            "state",
            "domain",
            "is_array",
            "disk",
        ]


class ArraySerializer(serializers.ModelSerializer):
    members = MemberSerializer(many=True, read_only=True)

    class Meta:
        model = Array
        fields = [
            "id",
            "host",
            "region",
            "name",
            "parent",
            "present",
            "status",
            "reason",
            "status_changed",
            *(name for name in ARRAY_FACT_FIELDS if name != "position"),
            "last_seen",
            "members",
        ]


class ArrayFilter(FilterSet):
    host = IdFilter(help_text="Host id")

    class Meta:
        model = Array
        fields = ["region", "status", "name", "level", "present", "stalled"]


class ArrayViewSet(SubjectThresholds, ConditionalGet, viewsets.ReadOnlyModelViewSet):
    """md arrays with their members. Rebuild figures are numbers: percent, KiB/s, minutes."""

    serializer_class = ArraySerializer
    queryset = Array.objects.select_related("host").prefetch_related("members")
    filterset_class = ArrayFilter
    ordering_fields = ["id", "name", "status", "status_changed", "sync_percent", "last_seen"]
    ordering = ["host", "position", "name", "pk"]


class MemberFilter(FilterSet):
    array = IdFilter(help_text="Array id")
    region = RegionFilter(field_name="array__region")
    host = IdFilter(field_name="array__host", help_text="Host id")

    class Meta:
        model = Member
        fields = ["device", "state", "domain"]


class MemberViewSet(ConditionalGet, viewsets.ReadOnlyModelViewSet):
    """Member devices of arrays, with their state and failure domain."""

    serializer_class = MemberSerializer
    queryset = Member.objects.all()
    filterset_class = MemberFilter
    ordering_fields = ["id", "device", "state"]
    ordering = ["array_id", "position", "pk"]


DISK_FIELDS = [
    "id",
    "host",
    "key",
    "device",
    "members",
    "present",
    "model",
    "serial",
    "wwn",
    "firmware",
    "protocol",
    "device_type",
    "capacity_bytes",
    "by_id",
    "by_path",
    "iscsi_portal",
    "iscsi_target",
    "iscsi_lun",
    "domain",
    "status",
    "failing",
    "summary",
    *COUNTERS,
    "first_seen",
    "last_read",
]


class DiskSerializer(serializers.ModelSerializer):
    class Meta:
        model = Disk
        fields = DISK_FIELDS


class DiskFilter(FilterSet):
    host = IdFilter(help_text="Host id")
    region = RegionFilter(field_name="host__region")

    class Meta:
        model = Disk
        fields = ["device", "serial", "wwn", "status", "failing", "present", "domain"]


class DiskViewSet(ConditionalGet, viewsets.ReadOnlyModelViewSet):
    """The disks under the hosts' arrays, known by WWN or serial across renames, with their
    SMART health (``status``: ok, warning, critical, or unknown when SMART cannot read it)
    and latest counters."""

    serializer_class = DiskSerializer
    queryset = Disk.objects.all()
    filterset_class = DiskFilter
    ordering_fields = ["id", "device", "status", "last_read"]
    ordering = ["host_id", "device", "pk"]


class DiskReadingSerializer(serializers.ModelSerializer):
    class Meta:
        model = DiskReading
        fields = ["id", "disk", "read_at", "status", *COUNTERS]


class DiskReadingFilter(SinceUntilFilterSet):
    time_field = "read_at"
    disk = IdFilter(help_text="Disk id")
    host = IdFilter(field_name="disk__host", help_text="Host id")

    class Meta:
        model = DiskReading
        fields: list[str] = []


class DiskReadingViewSet(AppendOnlyList, viewsets.ReadOnlyModelViewSet):
    """A disk's SMART counters over time (kept when they change, and at least hourly),
    newest first."""

    serializer_class = DiskReadingSerializer
    queryset = DiskReading.objects.all()
    filterset_class = DiskReadingFilter
    ordering = ["-read_at", "-pk"]


class HistorySerializer(serializers.ModelSerializer):
    array = serializers.IntegerField(source="object_id", read_only=True)

    class Meta:
        model = Transition
        fields = [
            "id",
            "array",
            "region",
            "subject_label",
            "old_status",
            "new_status",
            "reason",
            "figures",
            "created",
        ]


class HistoryFilter(SinceUntilFilterSet):
    array = IdFilter(field_name="object_id", help_text="Array id")
    region = RegionFilter()
    host = IdFilter(method="filter_host", help_text="Host id")
    status = django_filters.ChoiceFilter(
        field_name="new_status", choices=STATUS_CHOICES, help_text="The status changed to"
    )

    class Meta:
        model = Transition
        fields: list[str] = []

    def filter_host(self, queryset: QuerySet, name: str, value: int) -> QuerySet:
        arrays = Array.objects.filter(host_id=value).values("pk")
        return queryset.filter(object_id__in=arrays)


class HistoryViewSet(AppendOnlyList, viewsets.ReadOnlyModelViewSet):
    """Status changes of md arrays, newest first."""

    serializer_class = HistorySerializer
    queryset = Transition.objects.filter(concern=Array.concern)
    filterset_class = HistoryFilter
    ordering = ["-created", "-pk"]


#: Read by config/api.py through the concern registry: ``(prefix, viewset, basename)``, and
#: the push endpoint.
ROUTES = [
    ("raid/hosts", HostViewSet, "raid-host"),
    ("raid/arrays", ArrayViewSet, "raid-array"),
    ("raid/members", MemberViewSet, "raid-member"),
    ("raid/history", HistoryViewSet, "raid-history"),
    ("raid/disks", DiskViewSet, "raid-disk"),
    ("raid/disk-readings", DiskReadingViewSet, "raid-disk-reading"),
]
URLS = [re_path(r"^raid/hosts/(?P<pk>[0-9]+)/report/?$", report, name="raid-report")]

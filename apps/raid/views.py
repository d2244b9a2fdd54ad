"""The region panel (hosts and their worst array), the host page (arrays as a tree), and adding
and editing hosts in the app (Admins): "Test SSH" connects as the form stands (through the
outbound guard, host key verified) and shows what it read, before anything is saved; a push
host's token is issued on its page."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.core.paginator import Page, Paginator
from django.db.models import F, OuterRef, Prefetch, Subquery, Value, Window
from django.db.models.functions import Coalesce, RowNumber
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_POST, require_safe

from apps.accounts.roles import requires
from apps.alerts.models import Transition
from apps.lib import agents
from apps.lib.pages import subject_page
from apps.lib.status import Status, worst
from apps.regions import editing, panels
from apps.regions.models import Region

from . import ssh
from .collect import ssh_target
from .errors import ParseError
from .forms import HostForm
from .models import Array, Disk, DiskReading, Host
from .report import assess

RECENT_TRANSITIONS = 30
GONE_PAGE = 50  # gone arrays listed per page of the host page (?gone=2 for the next)
DISK_HISTORY = 48  # readings of each disk on the host page (the API has them all)


@dataclass
class HostRow:
    host: Host
    status: Status
    counts: list[tuple[Status, int]]
    roots: list[Array]
    attention: list[Array]  # arrays that are not ok, worst first


@dataclass
class Node:
    array: Array
    children: list[Node] = field(default_factory=list)


def host_rows(hosts: list[Host]) -> list[HostRow]:
    rows = []
    for host in hosts:
        arrays = [a for a in host.arrays.all() if a.present]
        counts = Counter(a.status for a in arrays)
        ranked = sorted(
            ((Status(s), n) for s, n in counts.items()), key=lambda pair: -pair[0].severity
        )
        attention = sorted(
            (a for a in arrays if a.status != Status.OK),
            key=lambda a: (-Status(a.status).severity, a.position),
        )
        rows.append(
            HostRow(
                host=host,
                status=worst(a.status for a in arrays) or Status.UNKNOWN,
                counts=ranked,
                roots=[a for a in arrays if a.parent_id is None],
                attention=attention,
            )
        )
    rows.sort(key=lambda r: (-r.status.severity, r.host.name))
    return rows


#: What the region panel reads of a host and of its arrays (the arrays' forty columns and the
#: host's keys and rules were most of the panel's reading).
PANEL_HOST_FIELDS = ("name", "region_id", "collection", "is_demo", "last_report", "last_error")
PANEL_ARRAY_FIELDS = (
    "host_id",
    "parent_id",
    "present",
    "status",
    "reason",
    "position",
    "headroom_text",
    "domain_headroom_text",
)


def region_panel_context(region: Region, limit: int | None) -> dict[str, Any]:
    """The region's hosts worst first (the first ``limit``; all with None), a host's status being
    its worst present array's, and how many there are."""
    present = Array.objects.filter(present=True)
    worst_array = present.filter(host=OuterRef("pk")).annotate(rank=panels.severity())
    shown = Prefetch("arrays", queryset=present.only(*PANEL_ARRAY_FIELDS))
    hosts, total = panels.worst_first(
        Host.objects.filter(region=region).only(*PANEL_HOST_FIELDS).prefetch_related(shown),
        # no array reported: unknown, as host_rows says
        Coalesce(
            Subquery(worst_array.order_by("-rank").values("rank")[:1]),
            Value(Status.UNKNOWN.severity),
        ),
        panels.as_python_sorts("name"),
        "name",
        limit=limit,
    )
    return {"rows": host_rows(hosts), "total": total, "region": region}


def tree(arrays: list[Array]) -> list[Node]:
    nodes = {a.pk: Node(a) for a in arrays}
    roots = []
    for array in arrays:
        parent = nodes.get(array.parent_id) if array.parent_id else None
        (parent.children if parent else roots).append(nodes[array.pk])
    return roots


AGENT = "vigil-raid-push"


def disk_history(disks: list[Disk]) -> list[tuple[Disk, list[DiskReading]]]:
    """Each disk with its latest readings, newest first, in one query (not in the 30-second
    poll)."""
    newest_first = Window(RowNumber(), partition_by=F("disk_id"), order_by=F("read_at").desc())
    rows = (
        DiskReading.objects.filter(disk__in=disks)
        .annotate(row=newest_first)
        .filter(row__lte=DISK_HISTORY)
        .order_by("disk_id", "-read_at")
    )
    by_disk: dict[int, list[DiskReading]] = {}
    for reading in rows:
        by_disk.setdefault(reading.disk_id, []).append(reading)
    return [(disk, by_disk[disk.pk]) for disk in disks if disk.pk in by_disk]


def gone_page(host: Host, number: object = 1) -> Page:
    """One page of the host's arrays gone from /proc/mdstat, last seen first (only their names
    and times are read: a host may keep ``VIGIL_RAID_MAX_ARRAYS_PER_HOST`` of them)."""
    gone = (
        host.arrays.filter(present=False)
        .only("name", "last_seen", "host_id")
        .order_by(F("last_seen").desc(nulls_last=True), "name")
    )
    return Paginator(gone, GONE_PAGE).get_page(number)


def live_context(host: Host) -> dict[str, Any]:
    """What the host page's 30-second poll shows (its live part): status, arrays, disks."""
    present = list(
        host.arrays.filter(present=True)
        .prefetch_related("members__disk")
        .order_by("position", "name")
    )
    disks = list(host.disks.order_by("-present", "device"))
    return {
        "host": host,
        "status": worst(a.status for a in present) or Status.UNKNOWN,
        "nodes": tree(present),
        "arrays": present,
        "disks": [d for d in disks if d.present],
        "gone_disks": [d for d in disks if not d.present],
    }


def host_context(host: Host, *, gone: object = 1) -> dict[str, Any]:
    """The whole host page: its live part, then the gone arrays, the recent changes, the
    disks' history and the raw report, which the poll does not read."""
    context = live_context(host)
    content_type = ContentType.objects.get_for_model(Array)
    transitions = Transition.objects.filter(
        content_type=content_type, object_id__in=host.arrays.values("pk")
    ).order_by("-created", "-pk")[:RECENT_TRANSITIONS]
    return {
        **context,
        "gone": gone_page(host, gone),
        "gone_days": settings.VIGIL_RAID_GONE_ARRAY_RETENTION_DAYS,
        "transitions": transitions,
        "details": sorted((host.details_text or {}).items()),
        "agent_files": agents.files(AGENT),
        "disk_history": disk_history(context["disks"]),
        "advice": [item for a in context["arrays"] for item in a.advice],
    }


@require_safe
def host_detail(request: HttpRequest, pk: int) -> HttpResponse:
    host = get_object_or_404(Host.objects.select_related("region", "region__account"), pk=pk)
    if request.htmx:  # the 30-second poll: the live part alone
        return subject_page(request, "raid/host.html", live_context(host))
    context = host_context(host, gone=request.GET.get("gone", 1))
    return subject_page(request, "raid/host.html", context)


@requires("raid.change_host")
@require_POST
def host_token(request: HttpRequest, pk: int) -> HttpResponse:
    """Replace the host's push token and show the new one, once."""
    host = get_object_or_404(Host.objects.select_related("region"), pk=pk)
    context = host_context(host)
    context["new_token"] = host.issue_token()
    context["vigil_url"] = settings.VIGIL_BASE_URL
    return render(request, "raid/host.html", context)


@require_safe
def host_agent(request: HttpRequest, pk: int, filename: str) -> HttpResponse:
    """The push agent (this host's id and Vigil's URL filled in), its units, its cron line."""
    host = get_object_or_404(Host, pk=pk)
    return agents.download(AGENT, filename, {"VIGIL_HOST": str(host.pk)})


def try_ssh(host: Host) -> dict[str, Any]:
    """Collect once from the unsaved host; what was read, or the error in words."""
    if not host.ssh_address:
        return {"error": "Give an SSH address to test the connection."}
    try:
        collected = ssh.collect(ssh_target(host))
    except ssh.SshError as error:
        return {"error": str(error)}
    read = {"mdstat": collected.mdstat, "warnings": collected.warnings}
    try:
        report = assess(collected.mdstat, collected.details, host.domain_rules, host.domain_noun)
    except ParseError as error:  # outside text: said in words, never a failed page
        return {**read, "error": str(error)}
    return {**read, "arrays": [(a.name, a.verdict) for a in report.arrays]}


def host_edit(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    return editing.edit_page(request, HostForm, pk, trial=try_ssh)

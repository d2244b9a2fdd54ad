"""The EFS section of the region page and the file system page (charts, headroom, the
throughput-mode comparison, back-fill)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Value
from django.db.models.functions import Coalesce, NullIf
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.utils.html import json_script
from django.views.decorators.http import require_safe

from apps.lib.pages import subject_page
from apps.regions import panels
from apps.regions.models import Region

from . import charts, client_history, documented, history, limits, pricing
from .metrics import GIB, op_sizes_of
from .models import FileSystem, RegionCollection
from .verdict import credit_forecast, credit_points_of

RANGES = {
    "3h": timedelta(hours=3),
    "12h": timedelta(hours=12),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
}
PROVISION = ("p95", "peak")


def table_row(fs: FileSystem) -> dict[str, Any]:
    """What the region table shows of one file system; None where nothing is known."""
    f = fs.figures or {}
    standard = f.get("standard_bytes") or fs.size_standard_bytes
    hours = f.get("hours_to_exhaustion")
    credits = f.get("credit_balance_bytes")
    return {
        "fs": fs,
        "io_limit_pct": f.get("io_limit_pct"),
        "utilisation_pct": f.get("throughput_utilisation_pct"),
        "credits_gib": None if credits is None else credits / GIB,
        "hours_to_exhaustion": hours,
        "credit_state": f.get("credit_state"),
        "standard_gib": None if standard is None else standard / GIB,
        "mode": fs.throughput_mode
        + (f" {fs.provisioned_mibps:g} MiB/s" if fs.provisioned_mibps else ""),
    }


#: The file system's fields the region panel does not read.
PANEL_UNREAD = (
    "tags",
    "replicas",
    "mount_target_addresses",
    "created_at",
    "discovered",
    "collected_until",
    "last_error_at",
    "changed",
)


def region_panel_context(region: Region, limit: int | None) -> dict[str, Any]:
    """The region's live file systems worst first (the first ``limit``; all with None) and how
    many there are."""
    live = FileSystem.objects.filter(region=region, deleted__isnull=True)
    filesystems, total = panels.worst_first(
        # Not the JSON and times the table never shows: a region's hundred file systems spent
        # most of the panel's reading in decoding them.
        live.defer(*PANEL_UNREAD),
        panels.severity(),
        # FileSystem.label, then the model's order among equal labels
        panels.as_python_sorts(Coalesce(NullIf("name", Value("")), "filesystem_id")),
        "name",
        "filesystem_id",
        limit=limit,
    )
    collection = RegionCollection.objects.filter(region=region).first()
    # Every file system's clients, counted in SQL: whether the column shows at all depends on
    # the rows not shown too.
    clients = client_history.client_counts(live, timezone.now())
    rows = [{**table_row(fs), "clients": clients.get(fs.pk)} for fs in filesystems]
    return {
        "rows": rows,
        "total": total,
        "collection": collection,
        "any_clients": bool(clients),
    }


def _usage(pk: int, now: Any) -> dict:
    """The 30 days of usage behind the mode comparison, kept for
    ``VIGIL_EFS_COMPARISON_CACHE_SECONDS`` (an hour): it is most of the page's SQL, and an hour
    more or less of 30 days does not change which mode is cheaper."""
    seconds = settings.VIGIL_EFS_COMPARISON_CACHE_SECONDS
    if seconds <= 0:
        return history.usage([pk], now - pricing.WINDOW, now, now)
    key = f"vigil:efs:usage:{pk}"
    found = cache.get(key)
    if found is None:
        found = history.usage([pk], now - pricing.WINDOW, now, now)
        cache.set(key, found, seconds)
    return found


def _price(request: HttpRequest) -> float | None:
    """A provisioned price typed on the page, or None (the settings' or the table's)."""
    try:
        price = float(request.GET.get("price", ""))
    except ValueError:
        return None
    return price if 0 <= price < 10_000 else None


def step_label(seconds: int) -> str:
    """ "1 minute", "15 minutes", "1 hour", "6 hours"."""
    if seconds % 3600 == 0:
        hours = seconds // 3600
        return f"{hours} hour{'s' if hours != 1 else ''}"
    minutes = seconds // 60
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def live_context(fs: FileSystem, now: Any) -> dict[str, Any]:
    """What the page's live part (``filesystem.html#live``, polled every 30 s) shows: status,
    figures, headroom, storage, the credit forecast and back-fill progress."""
    forecast = None
    if fs.throughput_mode == "bursting":
        window = timedelta(hours=settings.VIGIL_EFS_FORECAST_HOURS)
        # One row per minute (a one-minute bucket of minute rows is the row itself).
        recent = history.load_columns(fs.pk, now - window, now, 60, now, ("burst_credit_balance",))
        forecast = credit_forecast(credit_points_of(recent), now, window=window)
    standard, ia, archive = pricing.storage_bytes(fs)
    room = limits.headroom_from_figures(fs.figures or {})
    table = pricing.limits_table()
    return {
        "fs": fs,
        "row": table_row(fs),
        "collection": RegionCollection.objects.filter(region=fs.region).first(),
        "forecast": forecast,
        "measured_headroom": [h for h in room if h.basis == limits.IMPLIED],
        "documented_headroom": [h for h in room if h.basis == limits.DOCUMENTED],
        "documented": documented_facts(fs, table),
        "replicas": fs.replica_states(),
        "replica_warning_minutes": documented.value(table, "replication.rpo_minutes"),
        "storage": {"standard": standard, "ia": ia, "archive": archive},
        "progress_pct": None if fs.backfill_progress is None else fs.backfill_progress * 100,
    }


def documented_facts(fs: FileSystem, table: documented.Table) -> dict[str, Any]:
    """AWS's documented figures that apply to ``fs`` (its type, mode and Region), each with
    where it comes from, for the page to tell them from what was measured."""
    mode = documented.mode_limits(table, fs.file_system_type, fs.throughput_mode, fs.region.code)
    key = f"{fs.file_system_type}.{fs.throughput_mode}.read_mibps"
    source = documented.figure(table, key if key in table else "regional.bursting.read_mibps")
    out: dict[str, Any] = {
        "limits": mode,
        "read_on": source.read_on or "set by VIGIL_EFS_LIMITS",
        "sources": mode.sources,
        "type_label": "One Zone" if fs.file_system_type == "one_zone" else "Regional",
    }
    standard = (fs.figures or {}).get("standard_bytes") or fs.size_standard_bytes
    if fs.throughput_mode == "bursting" and standard is not None:
        out["credit_cap_bytes"] = documented.credit_cap_bytes(standard, table)
    return out


def _client_shares(fs: FileSystem, range_key: str, start: Any, now: Any) -> dict:
    """Which client over the range, worked out at most once per ``VIGIL_PAGE_CACHE_SECONDS``
    for every viewer (as the region panels are): at 1,000 clients it costs about as much as the
    rest of the page (bench/nfs_clients.py), and the clients push once a minute."""
    seconds = settings.VIGIL_PAGE_CACHE_SECONDS
    if seconds <= 0:
        return client_history.client_shares(fs, start, now, now, cloudwatch_alone=False)
    key = f"vigil:efs:clients:{fs.pk}:{range_key}"
    found = cache.get(key)
    if found is None:
        found = client_history.client_shares(fs, start, now, now, cloudwatch_alone=False)
        cache.set(key, found, seconds)
    return found


def chart_scripts(drawn: dict[str, dict]) -> dict[str, str]:
    """Each chart's data as the page carries it, ``<script id="efs-<key>">`` (``json_script``,
    what ``{% timeseries %}`` writes when it is not given one): encoding a thousand points a
    series cost a tenth of the page's CPU, so it is done once with the drawing."""
    return {key: json_script(chart, f"efs-{key}") for key, chart in drawn.items()}


def _charts(fs: FileSystem, range_key: str, start: Any, now: Any, step: int) -> tuple:
    """The range's charts (without the forecast) and their scripts (``chart_scripts``),
    whether it has data, and its request sizes.

    Shared among requests for at most ``VIGIL_PAGE_CACHE_SECONDS`` and never past the minute
    they were drawn in (their x axis is the same for every moment of a minute), keyed by the
    file system's ``collected_until``, so a collection that ends draws them again: they were
    most of the page's CPU (bench/pages.py)."""

    def draw() -> tuple:
        series = history.load_columns(fs.pk, start, now, step, now, history.CHART_FIELDS)
        drawn = charts.charts_of(series, start, now, timedelta(seconds=step))
        sizes = op_sizes_of(series, pricing.metering_table())
        has_data = bool(series["ts"])  # without, the page draws no chart
        return drawn, chart_scripts(drawn) if has_data else {}, has_data, sizes

    seconds = settings.VIGIL_PAGE_CACHE_SECONDS
    if seconds <= 0:
        return draw()
    minute, into = divmod(int(now.timestamp()), 60)
    seen = fs.collected_until.timestamp() if fs.collected_until else ""
    key = f"vigil:efs:drawn:{fs.pk}:{range_key}:{minute}:{seen}"
    found = cache.get(key)
    if found is None:
        found = draw()
        cache.set(key, found, min(seconds, 60 - into))
    return found


@require_safe
def filesystem_detail(request: HttpRequest, pk: int) -> HttpResponse:
    fs = get_object_or_404(FileSystem.objects.select_related("region__account"), pk=pk)
    now = timezone.now()
    context = live_context(fs, now)
    if request.htmx:  # the 30-second poll: no charts, no mode comparison
        return render(request, "efs/filesystem.html#live", context)
    range_key = request.GET.get("range", "24h")
    if range_key not in RANGES:
        range_key = "24h"
    start = now - RANGES[range_key]
    step = history.chart_step(start, now, now)
    drawn, scripts, has_data, sizes = _charts(fs, range_key, start, now, step)
    shown = charts.with_forecast(drawn, context["forecast"], timedelta(seconds=step))
    if scripts and shown["credits"] is not drawn["credits"]:  # the request's forecast line
        scripts = {**scripts, "credits": json_script(shown["credits"], "efs-credits")}
    price = _price(request)
    provision = request.GET.get("provision", "peak")
    if provision not in PROVISION:
        provision = "peak"
    comparison = pricing.comparisons(
        [fs], now, provision=provision, price_per_mibps=price, usage=_usage(fs.pk, now)
    ).get(fs.pk)
    context |= {
        "ranges": list(RANGES),
        "range_key": range_key,
        "step": step_label(step),
        "charts": shown,
        "scripts": scripts,
        "has_data": has_data,
        "sizes": sizes,
        "comparison": comparison,
        "provision": provision,
        "price": price,
        "clients": _client_shares(fs, range_key, start, now),
    }
    name = f"{fs.filesystem_id}-{range_key}"
    return subject_page(request, "efs/filesystem.html", context, context["charts"], name)


CLIENTS_PAGE = 100


@require_safe
def filesystem_clients(request: HttpRequest, pk: int) -> HttpResponse:
    """Every NFS client of the file system over the range, by bytes moved, a hundred a page
    (the file system page shows the top ones and sums the rest)."""
    fs = get_object_or_404(FileSystem.objects.select_related("region"), pk=pk)
    now = timezone.now()
    range_key = request.GET.get("range", "24h")
    if range_key not in RANGES:
        range_key = "24h"
    try:
        page = max(1, int(request.GET.get("page", "1")))
    except ValueError:
        page = 1
    start = now - RANGES[range_key]
    ranked = client_history.ranked_clients(
        fs, start, now, now, limit=CLIENTS_PAGE, offset=(page - 1) * CLIENTS_PAGE
    )
    pages = max(1, -(-ranked.counted // CLIENTS_PAGE))
    first = (page - 1) * CLIENTS_PAGE + 1
    return render(
        request,
        "efs/clients.html",
        {
            "fs": fs,
            "ranges": list(RANGES),
            "range_key": range_key,
            "start": client_history.hour_of(start),
            "rows": ranked.rows,
            "clients": ranked.counted,
            "tail": f" that counted anything, {first}-{first + len(ranked.rows) - 1} here"
            if ranked.rows
            else " that counted anything",
            "page": page,
            "pages": pages,
        },
    )

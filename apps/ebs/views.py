"""The EBS section of the region page and the volume page (charts, forecast, cost advice)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Case, Value, When
from django.db.models.functions import Concat
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.http import require_safe

from apps.lib.credits import credit_forecast
from apps.lib.pages import subject_page
from apps.regions import panels
from apps.regions.models import Region

from . import charts, history, pricing
from .limits import BURSTING
from .models import RegionCollection, Volume

RANGES = {"3h": timedelta(hours=3), "24h": timedelta(hours=24), "7d": timedelta(days=7)}


def table_row(v: Volume) -> dict[str, Any]:
    """What the region table shows of one volume; None where nothing is known."""
    f = v.figures or {}
    return {
        "volume": v,
        "iops": f.get("iops"),
        "iops_limit": f.get("iops_limit"),
        "mibps": f.get("mibps"),
        "burst_balance": f.get("burst_balance_pct"),
        "hours_to_exhaustion": f.get("hours_to_exhaustion"),
        "credit_state": f.get("credit_state"),
        "instance": v.instance,
    }


def region_panel_context(region: Region, limit: int | None) -> dict[str, Any]:
    """The region's live volumes worst first (the first ``limit``; all with None) and how many
    there are."""
    volumes, total = panels.worst_first(
        Volume.objects.filter(region=region, deleted__isnull=True).select_related("instance"),
        panels.severity(),
        # Volume.label, then the model's order among equal labels
        panels.as_python_sorts(
            Case(
                When(name="", then="volume_id"),
                default=Concat("name", Value(" ("), "volume_id", Value(")")),
            )
        ),
        "name",
        "volume_id",
        limit=limit,
    )
    collection = RegionCollection.objects.filter(region=region).first()
    return {"rows": [table_row(v) for v in volumes], "total": total, "collection": collection}


def live_context(volume: Volume) -> dict[str, Any]:
    """What the page's live part (``volume.html#live``, polled every 30 s) shows."""
    f = volume.figures or {}
    at = f.get("credits_exhausted_at")
    return {
        "volume": volume,
        "row": table_row(volume),
        "f": f,
        "exhausted_at": datetime.fromisoformat(at) if isinstance(at, str) else None,
        "collection": RegionCollection.objects.filter(region=volume.region).first(),
        "performance": volume.performance,
        "bursting": volume.volume_type in BURSTING,
    }


@require_safe
def volume_detail(request: HttpRequest, pk: int) -> HttpResponse:
    volume = get_object_or_404(Volume.objects.select_related("region__account", "instance"), pk=pk)
    context = live_context(volume)
    if request.htmx:  # the 30-second poll: no charts, no cost advice
        return render(request, "ebs/volume.html#live", context)
    now = timezone.now()
    range_key = request.GET.get("range", "24h")
    if range_key not in RANGES:
        range_key = "24h"
    start = now - RANGES[range_key]
    samples = history.volume_samples([volume.pk], start, now)[volume.pk]
    forecast = None
    if volume.volume_type in BURSTING:
        window = timedelta(hours=settings.VIGIL_EBS_FORECAST_HOURS)
        recent = [(s.timestamp, s.burst_balance) for s in samples if s.timestamp >= now - window]
        forecast = credit_forecast(recent, now, window=window)
    step, drawn = charts.charts(samples, start, now, forecast)
    context |= {
        "ranges": list(RANGES),
        "range_key": range_key,
        "step_minutes": step // 60,
        "charts": drawn,
        "has_data": bool(samples),
        "forecast": forecast,
        "cost": pricing.cost(volume, now),
        "advice_days": settings.VIGIL_EBS_ADVICE_DAYS,
    }
    name = f"{volume.volume_id}-{range_key}"
    return subject_page(request, "ebs/volume.html", context, drawn, name)

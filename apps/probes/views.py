"""The probes section of the region page, the target page, the preset list, and adding and
editing targets in the app (Operators and Admins): "Measure once" probes the URL as the form
stands, through the outbound guard, and shows the result before anything is saved."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

from django.contrib import messages
from django.db.models import OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce, NullIf
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST, require_safe

from apps.accounts.roles import requires, writes_require
from apps.lib import outbound
from apps.lib.pages import subject_page
from apps.regions import editing, panels
from apps.regions import thresholds as region_thresholds
from apps.regions.models import Region

from .forms import TargetForm
from .keepalive import Measurement, measure
from .models import Result, Target, thresholds
from .presets import PRESET_INTERVAL_S, PRESETS, preset
from .verdict import probe_verdict

CHART_RESULTS = 500
TABLE_RESULTS = 50
CHART_TITLES = {"idle": "Idle timeout", "phases": "Latency phases"}
#: "Measure once" waits at most this long for the server to close an idle connection: the
#: page answers within it; a longer keep-alive shows as "still open at the cap".
TRY_CAP_S = 20.0


#: The region panel looks for each target's last result in this many days first: the results
#: are partitioned by day (``apps.lib.partitions``), and a lookup bounded by a constant reads the
#: newest partitions alone, not every day kept (100 targets x 4 columns x 39 days of partitions
#: were 15,600 index probes and most of the region page's cold time on the seeded fleet).
RECENT_DAYS = 2


def targets_with_last_result(
    targets: QuerySet[Target], since: datetime | None = None
) -> QuerySet[Target]:
    """``targets`` with their last result's figures (None without one, or without one since
    ``since``)."""
    last = Result.objects.filter(target=OuterRef("pk")).order_by("-created", "-pk")
    if since is not None:
        last = last.filter(created__gte=since)
    return targets.annotate(
        last_idle_s=Subquery(last.values("idle_timeout_s")[:1]),
        last_closed_by=Subquery(last.values("closed_by")[:1]),
        last_cap_s=Subquery(last.values("cap_s")[:1]),
        last_probed=Subquery(last.values("created")[:1]),
    )


def region_panel_context(region: Region, limit: int | None) -> dict[str, Any]:
    """The region's targets worst first (the first ``limit``; all with None), with their last
    result, and how many there are."""
    ranked, total = panels.worst_first(
        Target.objects.filter(region=region),
        panels.severity(),
        # str(target), then the model's order among equal names
        panels.as_python_sorts(Coalesce(NullIf("name", Value("")), "url")),
        "name",
        "url",
        limit=limit,
    )
    since = timezone.now() - timedelta(days=RECENT_DAYS)
    shown = [t.pk for t in ranked]
    found = {t.pk: t for t in targets_with_last_result(Target.objects.filter(pk__in=shown), since)}
    older = [pk for pk, t in found.items() if t.last_probed is None]
    if older:  # not probed for days, or never: looked for in every day kept
        found |= {t.pk: t for t in targets_with_last_result(Target.objects.filter(pk__in=older))}
    return {"region": region, "targets": [found[pk] for pk in shown], "total": total}


def idle_chart(results: list[Result], target: Target) -> dict[str, Any]:
    """Measured idle timeout over time; failed runs are gaps, cap-reached runs a separate line."""
    series = [
        {"label": "Idle timeout", "unit": "s", "values": [r.idle_timeout_s for r in results]},
        {
            "label": "Still open at the cap",
            "unit": "s",
            "values": [r.cap_s if r.closed_by == Result.ClosedBy.CAP else None for r in results],
        },
    ]
    if target.expected_range:
        low, high = target.expected_range
        series.append(
            {"label": "Expected from", "unit": "s", "dash": True, "values": [low] * len(results)}
        )
        series.append(
            {"label": "Expected to", "unit": "s", "dash": True, "values": [high] * len(results)}
        )
    return {"x": [int(r.started_at.timestamp()) for r in results], "series": series}


def phases_chart(results: list[Result]) -> dict[str, Any]:
    """DNS, connect, TLS and first-byte times in milliseconds; a phase not reached is a gap."""

    def ms(value: float | None) -> float | None:
        return None if value is None else round(value * 1000, 3)

    phases = [
        ("DNS", "dns_s"),
        ("Connect", "connect_s"),
        ("TLS", "tls_s"),
        ("First byte", "first_byte_s"),
    ]
    return {
        "x": [int(r.started_at.timestamp()) for r in results],
        "series": [
            {"label": label, "unit": "ms", "values": [ms(getattr(r, field)) for r in results]}
            for label, field in phases
        ],
    }


@require_safe
def target_detail(request: HttpRequest, pk: int) -> HttpResponse:
    target = get_object_or_404(Target.objects.select_related("region", "region__account"), pk=pk)
    if request.htmx:  # the 30-second poll: no charts, no results (docs/architecture.md)
        return render(request, "probes/target.html#live", {"target": target})
    # Two of a row's three times are never shown: not reading them saves a thousand datetime
    # parses per view (a third of the page's CPU on PostgreSQL).
    recent = list(
        target.results.defer("created", "tls_expires").order_by("-created", "-pk")[:CHART_RESULTS]
    )
    chronological = recent[::-1]
    charts = {"idle": idle_chart(chronological, target), "phases": phases_chart(chronological)}
    context = {
        "target": target,
        "results": recent[:TABLE_RESULTS],
        "charts": [(key, CHART_TITLES[key], chart) for key, chart in charts.items()],
    }
    return subject_page(request, "probes/target.html", context, charts, f"probe-{pk}")


@requires("probes.change_target")
@require_POST
def target_enable(request: HttpRequest, pk: int) -> HttpResponse:
    """Enable or disable a target (``enabled`` in the form: "1" or "0"); enabling probes soon."""
    target = get_object_or_404(Target, pk=pk)
    enable = request.POST.get("enabled") == "1"
    target.enabled = enable
    if enable:
        target.next_due = timezone.now()
    target.save(update_fields=["enabled", "next_due"])  # the audit trail records who did it
    messages.success(request, f"{target} is {'enabled' if enable else 'disabled'}.")
    return redirect("probes:target_detail", pk=pk)


@writes_require("probes.add_target")
def presets(request: HttpRequest) -> HttpResponse:
    """The seed's public sites; POST adds one, disabled, to the chosen region or site."""
    regions = list(Region.objects.shown().select_related("account"))
    if request.method == "POST":
        chosen = preset(request.POST.get("preset", ""))
        region = next((r for r in regions if str(r.pk) == request.POST.get("region")), None)
        if chosen is None or region is None:
            messages.error(request, "Choose a site and a region.")
            return redirect("probes:presets")
        target, created = Target.objects.get_or_create(
            region=region,
            url=chosen.url,
            defaults={
                "name": chosen.name,
                "expected_min_s": chosen.expected_min_s,
                "expected_max_s": chosen.expected_max_s,
                "cap_s": chosen.cap_s,
                "interval_s": PRESET_INTERVAL_S,
                "enabled": False,
            },
        )
        verb = "Added" if created else "Already there:"
        messages.success(request, f"{verb} {target} in {region}, disabled until you enable it.")
        return redirect("probes:target_detail", pk=target.pk)
    added = set(
        Target.objects.filter(url__in=[p.url for p in PRESETS]).values_list("url", flat=True)
    )
    rows = [(p, p.url in added) for p in PRESETS]
    return render(request, "probes/presets.html", {"rows": rows, "regions": regions})


def try_once(target: Target) -> tuple[Measurement, Any]:
    """Probe the unsaved target once (cap at ``TRY_CAP_S``) and judge it."""
    measurement = asyncio.run(
        measure(
            target.url,
            cap_s=min(target.cap_s, TRY_CAP_S),
            timeout_s=min(target.timeout_s, 10.0),
            verify_tls=target.verify_tls,
            policy=outbound.Policy.from_settings(),
        )
    )
    verdict = probe_verdict(
        measurement,
        expected_range=target.expected_range,
        thresholds=region_thresholds.for_subject(target, thresholds())
        if target.pk
        else thresholds(),
        now=timezone.now(),
    )
    return measurement, verdict


def target_edit(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    return editing.edit_page(request, TargetForm, pk, trial=_trial)


def _trial(target: Target) -> dict[str, Any]:
    measurement, verdict = try_once(target)
    return {"measurement": measurement, "verdict": verdict, "cap": TRY_CAP_S}

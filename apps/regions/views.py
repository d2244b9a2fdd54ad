"""The home page (every region at a glance) and the region page."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from apps.lib.status import Status, worst

from . import concerns
from .models import Account, Region


@dataclass
class Tile:
    """One region (or site, or an account that has no region yet) on the home page."""

    title: str
    subtitle: str
    region: Region | None = None
    account: Account | None = None
    error: str = ""
    rows: list[tuple[str, list[tuple[Status, int]]]] = field(default_factory=list)

    @property
    def status(self) -> Status | None:
        """The worst status of what the region holds, and unknown while collection fails."""
        statuses = [status for _, per_status in self.rows for status, _ in per_status]
        return worst(statuses + [Status.UNKNOWN] if self.error else statuses)


def _rows(counts: dict[str, Counter[str]]) -> list[tuple[str, list[tuple[Status, int]]]]:
    """Per concern (in registration order), its subjects counted by status, worst first."""
    rows = []
    for concern in concerns.registered():
        per_status = counts.get(concern.key)
        if per_status:
            ranked = sorted(
                ((Status(s), n) for s, n in per_status.items() if n),
                key=lambda pair: -pair[0].severity,
            )
            rows.append((concern.label, ranked))
    return rows


def overview() -> list[Tile]:
    regions = list(Region.objects.shown().select_related("account"))
    counts = concerns.status_counts(r.pk for r in regions)
    failing = concerns.region_errors(r.pk for r in regions)
    tiles = []
    for region in regions:
        account = region.account
        errors = [account.last_error] if account and account.last_error else []
        tiles.append(
            Tile(
                title=region.name or region.code,
                subtitle=region.code if account is None else f"{region.code} · {account.name}",
                region=region,
                account=account,
                error="; ".join(errors + failing.get(region.pk, [])),
                rows=_rows(counts.get(region.pk, {})),
            )
        )
    shown_accounts = {t.account.pk for t in tiles if t.account}
    for account in Account.objects.filter(enabled=True).exclude(pk__in=shown_accounts):
        tiles.append(
            Tile(
                title=account.name,
                subtitle="no regions discovered yet",
                account=account,
                error=account.last_error,
            )
        )
    tiles.sort(key=lambda t: (-(t.status.severity if t.status else -1), t.title))
    return tiles


def home(request: HttpRequest) -> HttpResponse:
    template = "regions/home.html#tiles" if request.htmx else "regions/home.html"
    context = {"tiles": overview(), "concerns": concerns.registered()}
    return render(request, template, context)


#: Rows a region panel shows, worst first, unless all are asked for (``?all=1``): past a few
#: dozen rows the page's time goes into rendering rows of healthy subjects.
PANEL_ROWS = 25


def _rows_shown(request: HttpRequest) -> dict[str, Any]:
    """The panel templates' ``rows_slice`` (for the ``slice`` filter) and ``show_all``."""
    show_all = request.GET.get("all") == "1"
    return {"show_all": show_all, "rows_slice": ":" if show_all else f":{PANEL_ROWS}"}


def region_panel(request: HttpRequest, pk: int, concern: str) -> HttpResponse:
    """One concern's section of the region page alone, for htmx polling."""
    region = get_object_or_404(Region, pk=pk)
    found = next((c for c in concerns.registered() if c.key == concern), None)
    if found is None or not (found.region_template and found.region_context):
        raise Http404(f"No region panel for {concern!r}")
    context = {"region": region, "panel": found.region_context(region), **_rows_shown(request)}
    return render(request, found.region_template, context)


def region_detail(request: HttpRequest, pk: int) -> HttpResponse:
    region = get_object_or_404(Region.objects.select_related("account"), pk=pk)
    panels = [
        (concern, concern.region_template, concern.region_context(region))
        for concern in concerns.registered()
        if concern.region_template and concern.region_context
    ]
    context = {"region": region, "panels": panels, **_rows_shown(request)}
    return render(request, "regions/region.html", context)

"""The home page (every region at a glance) and the region page."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

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


def cached_fragment(key: str, render_html: Callable[[], str]) -> SafeString:
    """A page fragment rendered at most once per ``VIGIL_PAGE_CACHE_SECONDS`` (0: always).

    What the home tiles and region panels show changes when a collection ends (once a minute at
    most), while every open dashboard asks for them every 30 s: at fleet scale their queries and
    rows cost ten times a bare page, so many viewers share one rendering for a few seconds.
    """
    seconds = settings.VIGIL_PAGE_CACHE_SECONDS
    if seconds <= 0:
        return mark_safe(render_html())
    html = cache.get(key)
    if html is None:
        html = render_html()
        cache.set(key, html, seconds)
    return mark_safe(html)  # our own template's output, cached as such


def home(request: HttpRequest) -> HttpResponse:
    # The empty state differs for staff (a link to add an account): one fragment for each.
    tiles = cached_fragment(
        f"vigil:home:tiles:{int(request.user.is_staff)}",
        lambda: render_to_string("regions/home.html#tiles", {"tiles": overview()}, request=request),
    )
    if request.htmx:
        return HttpResponse(tiles)
    return render(request, "regions/home.html", {"tiles_html": tiles})


#: Rows a region panel shows, worst first, unless all are asked for (``?all=1``): past a few
#: dozen rows the page's time goes into rendering rows of healthy subjects.
PANEL_ROWS = 25


def _rows_shown(request: HttpRequest) -> dict[str, Any]:
    """The panel templates' ``rows_slice`` (for the ``slice`` filter) and ``show_all``."""
    show_all = request.GET.get("all") == "1"
    return {"show_all": show_all, "rows_slice": ":" if show_all else f":{PANEL_ROWS}"}


def _panel_html(request: HttpRequest, region: Region, concern: concerns.Concern) -> SafeString:
    shown = _rows_shown(request)
    return cached_fragment(
        # Staff see "add" links: one fragment for staff and one for the others.
        f"vigil:panel:{region.pk}:{concern.key}:{int(shown['show_all'])}:{int(request.user.is_staff)}",
        lambda: render_to_string(
            concern.region_template,
            {"region": region, "panel": concern.region_context(region), **shown},
            request=request,
        ),
    )


def region_panel(request: HttpRequest, pk: int, concern: str) -> HttpResponse:
    """One concern's section of the region page alone, for htmx polling."""
    region = get_object_or_404(Region, pk=pk)
    found = next((c for c in concerns.registered() if c.key == concern), None)
    if found is None or not (found.region_template and found.region_context):
        raise Http404(f"No region panel for {concern!r}")
    return HttpResponse(_panel_html(request, region, found))


def region_detail(request: HttpRequest, pk: int) -> HttpResponse:
    region = get_object_or_404(Region.objects.select_related("account"), pk=pk)
    panels = [
        (concern, _panel_html(request, region, concern))
        for concern in concerns.registered()
        if concern.region_template and concern.region_context
    ]
    return render(request, "regions/region.html", {"region": region, "panels": panels})

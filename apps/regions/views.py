"""The home page (every region at a glance) and the region page."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_POST, require_safe

from apps.accounts.roles import requires, role_of
from apps.lib.status import Status, worst

from . import concerns, thresholds, timeline
from .models import TIMELINE_SOURCES, Account, Region


@dataclass
class Row:
    """One concern on a tile: its counts worst first, and its worst subject with the reason."""

    label: str
    counts: list[tuple[Status, int]]
    summary: concerns.Summary

    @property
    def statuses(self) -> list[Status]:
        """What the tile's colour reads: subjects waiting for their first collection are not
        "unknown" yet (unless that is all there is)."""
        if self.summary.collecting:
            return [Status.UNKNOWN]
        judged = Counter(self.summary.counts)
        judged[Status.UNKNOWN.value] -= self.summary.waiting
        return [Status(s) for s, n in judged.items() if n > 0]


@dataclass
class Tile:
    """One region (or site, or an account that has no region yet) on the home page."""

    title: str
    subtitle: str
    region: Region | None = None
    account: Account | None = None
    error: str = ""
    rows: list[Row] = field(default_factory=list)

    @property
    def status(self) -> Status | None:
        """The worst status of what the region holds, and unknown while collection fails."""
        statuses = [status for row in self.rows for status in row.statuses]
        return worst(statuses + [Status.UNKNOWN] if self.error else statuses)

    @property
    def collecting(self) -> bool:
        """Everything here waits for its first collection (the first minute of a fresh start)."""
        return bool(self.rows) and all(row.summary.collecting for row in self.rows)


def _rows(summaries: dict[str, concerns.Summary]) -> list[Row]:
    """Per concern (in registration order), its subjects counted by status, worst first."""
    rows = []
    for concern in concerns.registered():
        summary = summaries.get(concern.key)
        if summary and summary.counts:
            judged = Counter(summary.counts)  # those waiting for a first collection apart
            judged[Status.UNKNOWN.value] -= summary.waiting
            ranked = sorted(
                ((Status(s), n) for s, n in judged.items() if n > 0),
                key=lambda pair: -pair[0].severity,
            )
            rows.append(Row(concern.label, ranked, summary))
    return rows


def overview() -> list[Tile]:
    regions = list(Region.objects.shown().select_related("account"))
    counts = concerns.summaries(r.pk for r in regions)
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


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    # The empty state differs by role (a link to add an account): one fragment for each.
    tiles = cached_fragment(
        f"vigil:home:tiles:{role_of(request.user)}",
        lambda: render_to_string("regions/home.html#tiles", {"tiles": overview()}, request=request),
    )
    if request.htmx:
        alarm = render_to_string("alarm_oob.html", {"page_title": "Regions"}, request=request)
        return HttpResponse(alarm + tiles)
    return render(request, "regions/home.html", {"tiles_html": tiles})


#: Rows a region panel shows, worst first, unless all are asked for (``?all=1``): past a few
#: dozen rows the page's time goes into rendering rows of healthy subjects.
PANEL_ROWS = 25


def _show_all(request: HttpRequest) -> bool:
    return request.GET.get("all") == "1"


def _panel_html(request: HttpRequest, region: Region, concern: concerns.Concern) -> SafeString:
    show_all = _show_all(request)
    return cached_fragment(
        # "Add" links follow the role's permissions: one fragment per role.
        f"vigil:panel:{region.pk}:{concern.key}:{int(show_all)}:{role_of(request.user)}",
        lambda: render_to_string(
            "regions/panel.html",
            {
                "concern": concern,
                "region": region,
                # the rows shown only, worst first, and how many there are
                "panel": concern.region_context(region, None if show_all else PANEL_ROWS),
                "show_all": show_all,
            },
            request=request,
        ),
    )


@require_safe
def region_panel(request: HttpRequest, pk: int, concern: str) -> HttpResponse:
    """One concern's section of the region page alone, for htmx polling."""
    region = get_object_or_404(Region, pk=pk)
    found = next((c for c in concerns.registered() if c.key == concern), None)
    if found is None or not (found.region_template and found.region_context):
        raise Http404(f"No region panel for {concern!r}")
    return HttpResponse(_panel_html(request, region, found))


@dataclass
class Panel:
    """One concern's section of the region page."""

    concern: concerns.Concern
    status: Status | None
    html: SafeString


def order_panels(
    shown: list[concerns.Concern], counts: dict[str, Counter[str]]
) -> tuple[list[tuple[concerns.Concern, Status]], list[concerns.Concern]]:
    """Concerns that hold subjects here, worst status first (registration order among equals),
    and the concerns that hold none (collapsed into one line of "add" links)."""
    held = []
    for concern in shown:
        statuses = [Status(s) for s, n in counts.get(concern.key, {}).items() if n]
        if statuses:
            held.append((concern, worst(statuses)))
    held.sort(key=lambda pair: -pair[1].severity)  # a stable sort keeps registration order
    held_keys = {c.key for c, _ in held}
    return held, [c for c in shown if c.key not in held_keys]


def add_links(request: HttpRequest, region: Region, empty: list[concerns.Concern]) -> list[Any]:
    """The "add" links of the empty concerns that this user may follow, for this region."""
    from django.urls import reverse

    links = []
    for concern in empty:
        for link in concern.add_links:
            if link.aws_only and region.kind != Region.Kind.AWS:
                continue
            if request.user.has_perm(link.permission):
                links.append((link.label, f"{reverse(link.url_name)}?region={region.pk}"))
    return links


def _concerns_html(request: HttpRequest, region: Region) -> SafeString:
    """The region's concern panels in their order and the line of empty concerns, cached as the
    panels are (their order comes from a status count per concern)."""

    def render_html() -> str:
        shown = [c for c in concerns.registered() if c.region_template and c.region_context]
        counts = concerns.status_counts([region.pk]).get(region.pk, {})
        held, empty = order_panels(shown, counts)
        panels = [Panel(c, status, _panel_html(request, region, c)) for c, status in held]
        context = {
            "region": region,
            "panels": panels,
            "empty": empty,
            "add_links": add_links(request, region, empty),
        }
        return render_to_string("regions/region.html#concerns", context, request=request)

    show_all = int(_show_all(request))
    return cached_fragment(
        f"vigil:region:{region.pk}:{show_all}:{role_of(request.user)}", render_html
    )


@require_safe
def region_detail(request: HttpRequest, pk: int) -> HttpResponse:
    region = get_object_or_404(Region.objects.select_related("account"), pk=pk)
    context = {
        "region": region,
        "concerns_html": _concerns_html(request, region),
        "timeline_html": _timeline_html(request, region),
    }
    return render(request, "regions/region.html", context)


def _timeline_html(request: HttpRequest, region: Region) -> SafeString:
    """The timeline section, shared as the panels are: it changes with a status change, which
    the panels show no sooner; its times are the viewer's zone's, so one rendering per zone."""
    span, more = timeline.parse_span(request.GET.get("span")), _more_changes(request)
    zone = timezone.get_current_timezone_name()
    return cached_fragment(
        f"vigil:timeline:{region.pk}:{span}:{int(more)}:{zone}",
        lambda: render_to_string(
            "regions/timeline.html",
            {"region": region, **timeline_for(region, span, more=more)},
            request=request,
        ),
    )


#: Changes read for one timeline at most (a flapping subject is capped by the alerts' flapping
#: threshold; this bounds the page whatever happens).
TIMELINE_CHANGES = 5000
#: Changes listed on the page (the newest) at most, with ``?changes=more``; the CSV holds all.
TIMELINE_LISTED = 300
#: Changes listed without it, followed by a link to the newest ``TIMELINE_LISTED``: a list of
#: hundreds of rows was most of the region page's time, folded away under its summary.
TIMELINE_SHOWN = 50


def _more_changes(request: HttpRequest) -> bool:
    return request.GET.get("changes") == "more"


def timeline_for(
    region: Region, span_key: str, now: datetime | None = None, *, more: bool = False
) -> dict[str, Any]:
    """The region's timeline over ``span_key`` ending now, with its changes for the text list
    (the newest ``TIMELINE_SHOWN``, or ``TIMELINE_LISTED`` with ``more``)."""
    end = timezone.localtime(now or timezone.now())
    start = end - timeline.SPANS[span_key]
    listed = TIMELINE_LISTED if more else TIMELINE_SHOWN
    rows = TIMELINE_SOURCES["changes"](region, start, end, TIMELINE_CHANGES)
    changes = [
        timeline.Change(
            subject=(concern, object_id),
            label=label,
            at=timezone.localtime(at),
            old=Status(old),
            new=Status(new),
            reason=reason,
        )
        for object_id, concern, label, at, old, new, reason in rows
    ]
    built = timeline.build(changes, start, end, TIMELINE_SOURCES["windows"](region, start, end))
    return {
        "timeline": built,
        # Every lane's grid, written once rather than by the template for each of 60 lanes.
        "grid_lines": mark_safe(
            "".join(
                f'<line x1="{t.x}%" x2="{t.x}%" y1="0" y2="16" class="grid"></line>'
                for t in built.ticks
            )
        ),
        # Each lane's bands and marks as SVG, written here rather than by the template's loops
        # (a region's 60 lanes hold hundreds of bands: most of the page's rendering).
        "lanes": [(lane, lane_svg(lane)) for lane in built.lanes],
        "changes": list(reversed(changes)),
        "listed": listed,
        "listed_slice": f":{listed}",
        # the link to the longer list, where there is one
        "more_listed": TIMELINE_LISTED if not more and len(changes) > listed else 0,
        "more": more,
        "span": span_key,
        "spans": list(timeline.SPANS),
        "truncated": len(rows) == TIMELINE_CHANGES,
    }


def lane_svg(lane: timeline.Lane) -> SafeString:
    """A lane's bands (each titled with its status and times) and change marks, as SVG."""
    parts = [
        f'<rect x="{b.x}%" width="{b.width}%" y="2" height="12" class="band band-{b.status}">'
        f"<title>{b.status.label} {b.start:%H:%M}–{b.end:%H:%M}</title></rect>"
        for b in lane.bands
    ]
    parts += [f'<line x1="{x}%" x2="{x}%" y1="0" y2="16" class="mark"></line>' for x in lane.marks]
    return mark_safe("".join(parts))  # numbers, times and a status value: nothing to escape


@require_safe
def region_timeline(request: HttpRequest, pk: int) -> HttpResponse:
    """The timeline section alone (htmx zoom), or as CSV (``?format=csv``)."""
    region = get_object_or_404(Region, pk=pk)
    if request.GET.get("format") == "csv":
        span = timeline.parse_span(request.GET.get("span"))
        context = {"region": region, **timeline_for(region, span, more=_more_changes(request))}
        return _timeline_csv(region, context)
    return HttpResponse(_timeline_html(request, region))


def _timeline_csv(region: Region, context: dict[str, Any]) -> HttpResponse:
    import csv

    response = HttpResponse(content_type="text/csv; charset=utf-8")
    name = f"vigil-{region.code}-timeline-{context['span']}.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    writer = csv.writer(response)
    writer.writerow(["time_utc", "concern", "subject", "old_status", "new_status", "reason"])
    for change in reversed(context["changes"]):
        writer.writerow(
            [
                change.at.astimezone(UTC).isoformat(),
                change.subject[0],
                _csv_safe(change.label),
                change.old,
                change.new,
                _csv_safe(change.reason),
            ]
        )
    return response


def _csv_safe(text: str) -> str:
    """No formula injection when the CSV is opened in a spreadsheet."""
    return f"'{text}" if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


@require_POST
@requires(thresholds.PERMISSION)
def edit_thresholds(request: HttpRequest, pk: int, concern: str) -> HttpResponse:
    """Replace the thresholds of a concern set for the region, or for one of its subjects
    (``subject`` in the form), with the form's (an empty field: not set); back to the page."""
    region = get_object_or_404(Region, pk=pk)
    found = concerns.find(concern)
    if found is None or found.thresholds is None:
        raise Http404("No thresholds for this concern")
    subject = None
    if request.POST.get("subject"):
        subject = get_object_or_404(
            found.subjects(), region=region, pk=request.POST.get("subject", "").strip() or 0
        )
    back = (
        subject.get_absolute_url()
        if subject
        else reverse("regions:detail", args=[region.pk]) + "#thresholds"
    )
    try:
        values = thresholds.form_values(found.thresholds.specs, request.POST)
        thresholds.replace(concern, region, subject.pk if subject else None, values)
    except ValueError as exc:
        messages.error(request, f"Thresholds not saved: {exc}")
        return redirect(back)
    whose = str(subject) if subject else f"{found.label} in {region.code}"
    messages.success(request, f"Thresholds of {whose} saved; they apply from the next collection.")
    return redirect(back)

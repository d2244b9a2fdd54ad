"""The region timeline: every subject's status changes, across concerns, on one time axis.

Pure: no Django, no I/O. ``build`` turns the status changes of a window (oldest first) into one
lane per subject, each a row of bands (a status from one instant to the next), with the axis
ticks, so that problems that happened together line up. Geometry is in percent of the axis
width, which the SVG template scales.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from apps.lib.status import Status

#: The spans a viewer may choose (``?span=``), the first being the default.
SPANS: dict[str, timedelta] = {
    "24h": timedelta(hours=24),
    "6h": timedelta(hours=6),
    "3d": timedelta(days=3),
    "7d": timedelta(days=7),
}
DEFAULT_SPAN = "24h"
#: Lanes drawn at most (the worst first); the text list and the CSV hold every change.
MAX_LANES = 60


def parse_span(value: str | None) -> str:
    """A known span key, or the default for anything else (the parameter is bounded)."""
    return value if value in SPANS else DEFAULT_SPAN


@dataclass(frozen=True)
class Change:
    subject: tuple[str, int]  # (concern, subject id)
    label: str
    at: datetime
    old: Status
    new: Status
    reason: str


@dataclass(frozen=True)
class Band:
    status: Status
    start: datetime
    end: datetime
    x: float  # percent of the axis
    width: float


@dataclass
class Lane:
    subject: tuple[str, int]
    label: str
    concern: str
    bands: list[Band] = field(default_factory=list)
    changes: int = 0
    marks: list[float] = field(default_factory=list)  # x of each change, drawn as a tick

    @property
    def worst(self) -> Status:
        return max((b.status for b in self.bands), key=lambda s: s.severity, default=Status.OK)


@dataclass(frozen=True)
class Tick:
    at: datetime
    x: float
    label: str


@dataclass(frozen=True)
class Span:
    """An occurrence of a maintenance window, clipped to the axis."""

    opens: datetime
    closes: datetime
    x: float
    width: float


@dataclass(frozen=True)
class Window:
    """A maintenance window that applies here, with its occurrences in the span."""

    label: str
    spans: list[Span]


@dataclass
class Timeline:
    start: datetime
    end: datetime
    lanes: list[Lane]
    ticks: list[Tick]
    hidden_lanes: int = 0
    windows: list[Window] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.lanes and not self.windows


def _x(at: datetime, start: datetime, end: datetime) -> float:
    span = (end - start).total_seconds()
    return round(max(0.0, min(100.0, (at - start).total_seconds() / span * 100)), 3)


def ticks(start: datetime, end: datetime, count: int = 6) -> list[Tick]:
    """Evenly spaced ticks on whole hours (or days, past three days), in the times' zone."""
    span = end - start
    step = timedelta(days=1) if span > timedelta(days=2) else timedelta(hours=1)
    per = max(1, round(span / step / count))
    first = start.replace(minute=0, second=0, microsecond=0)
    if step == timedelta(days=1):
        first = first.replace(hour=0)
    at = first if first >= start else first + step
    found = []
    while at <= end:
        label = f"{at:%a %d}" if step == timedelta(days=1) else f"{at:%H:%M}"
        found.append(Tick(at, _x(at, start, end), label))
        at += step * per
    return found


def windows_drawn(
    windows: Iterable[tuple[str, Iterable[tuple[datetime, datetime]]]],
    start: datetime,
    end: datetime,
) -> list[Window]:
    """Each (label, occurrences) whose occurrences overlap the axis, clipped to it; a window
    with none there is not drawn."""
    drawn = []
    for label, occurrences in windows:
        spans = []
        for opens, closes in occurrences:
            if closes <= start or opens >= end:
                continue
            x = _x(max(opens, start), start, end)
            spans.append(Span(opens, closes, x, round(_x(min(closes, end), start, end) - x, 3)))
        if spans:
            drawn.append(Window(label, spans))
    return drawn


def build(
    changes: Iterable[Change],
    start: datetime,
    end: datetime,
    windows: Iterable[tuple[str, Iterable[tuple[datetime, datetime]]]] = (),
) -> Timeline:
    """Lanes of bands from the window's changes (oldest first); a subject's status before its
    first change is that change's old status, unless that was unknown: a subject that was not
    collected yet (or not there) gets no band before its first change. Lanes with the worst
    statuses come first. ``windows``: the maintenance windows that apply here, as (label,
    occurrences in UTC), drawn above the lanes where they overlap the axis."""
    lanes: dict[tuple[str, int], Lane] = {}
    current: dict[tuple[str, int], tuple[Status, datetime]] = {}
    for change in changes:
        lane = lanes.get(change.subject)
        if lane is None:
            lane = lanes[change.subject] = Lane(change.subject, change.label, change.subject[0])
            current[change.subject] = (change.old, start)
        status, since = current[change.subject]
        at = max(start, min(end, change.at))
        first = lane.changes == 0
        if at > since and not (first and status == Status.UNKNOWN):
            lane.bands.append(_band(status, since, at, start, end))
        current[change.subject] = (change.new, at)
        lane.marks.append(_x(at, start, end))
        lane.label = change.label
        lane.changes += 1
    for key, lane in lanes.items():
        status, since = current[key]
        if end > since:
            lane.bands.append(_band(status, since, end, start, end))
    ordered = sorted(lanes.values(), key=lambda lane: (-lane.worst.severity, lane.label))
    return Timeline(
        start=start,
        end=end,
        lanes=ordered[:MAX_LANES],
        ticks=ticks(start, end),
        hidden_lanes=max(0, len(ordered) - MAX_LANES),
        windows=windows_drawn(windows, start, end),
    )


def _band(status: Status, since: datetime, until: datetime, start: datetime, end: datetime) -> Band:
    x = _x(since, start, end)
    return Band(status, since, until, x, round(_x(until, start, end) - x, 3))

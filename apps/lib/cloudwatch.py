"""GetMetricData for every concern that reads CloudWatch (EFS, EBS): settled, period-aligned
windows, calls of at most 500 queries and 100,800 data points, and the round trip itself,
paged by boto3's paginator. A concern's adapter (``apps/<key>/cloudwatch.py``) plans its
queries and parses the pages; see docs/architecture.md, "AWS specifics that bite".
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from apps.lib import aws
from apps.lib.aws import AccountAccess
from apps.lib.stopwatch import Stopwatch

if TYPE_CHECKING:
    from botocore.client import BaseClient

MAX_QUERIES_PER_CALL = 500
MAX_DATAPOINTS_PER_CALL = 100_800
PERIOD_S = 60

T = TypeVar("T")


def client(region: str, access: AccountAccess | None = None) -> BaseClient:
    """Requests are not checked against the service model on every call: the plans' are, by
    tests (``test_its_requests_match_botocores_get_metric_data_model``)."""
    return aws.client("cloudwatch", region, access or AccountAccess(), validate=False)


def batched(queries: Sequence[dict], size: int = MAX_QUERIES_PER_CALL) -> list[list[dict]]:
    """Chunks of at most ``size`` queries: ceil(len / size) calls, all full but the last."""
    if not 1 <= size <= MAX_QUERIES_PER_CALL:
        raise ValueError(f"a GetMetricData call takes 1 to {MAX_QUERIES_PER_CALL} queries")
    return [list(queries[i : i + size]) for i in range(0, len(queries), size)]


def min_calls(query_count: int) -> int:
    """The fewest GetMetricData calls for ``query_count`` queries: ceil(n / 500)."""
    return math.ceil(query_count / MAX_QUERIES_PER_CALL)


# --- Time windows ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """A half-open, period-aligned UTC interval [start, end) (EndTime is exclusive)."""

    start: datetime
    end: datetime

    def periods(self, period_s: int = PERIOD_S) -> int:
        return int((self.end - self.start).total_seconds() // period_s)


def align(moment: datetime, period_s: int = PERIOD_S) -> datetime:
    """Round ``moment`` down to a period boundary, in UTC (naive means UTC)."""
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    seconds = int(moment.timestamp()) // period_s * period_s
    return datetime.fromtimestamp(seconds, UTC)


def collection_window(
    now: datetime,
    last_end: datetime | None,
    *,
    settle: timedelta = timedelta(minutes=3),
    backfill: timedelta = timedelta(hours=24),
    first_lookback: timedelta = timedelta(hours=3),
    period_s: int = PERIOD_S,
) -> Window | None:
    """The window to collect: it ends ``settle`` ago (CloudWatch values converge for minutes),
    starts where the last collection ended (``first_lookback`` before the end the first
    time, enough for a credit forecast), and reaches back at most ``backfill``. None when
    there is nothing new yet."""
    end = align(now - settle, period_s)
    start = align(last_end, period_s) if last_end is not None else end - first_lookback
    start = max(start, align(end - backfill, period_s))
    return Window(start, end) if start < end else None


def split_window(
    window: Window,
    queries_per_call: int,
    *,
    period_s: int = PERIOD_S,
    max_datapoints: int = MAX_DATAPOINTS_PER_CALL,
) -> list[Window]:
    """Cut ``window`` so a call of ``queries_per_call`` queries returns at most
    ``max_datapoints`` points (500 queries: 201 minutes a call)."""
    if queries_per_call < 1:
        return []
    step = max_datapoints // queries_per_call
    if step < 1:
        raise ValueError("one period of these queries already exceeds the data point limit")
    pieces = []
    start = window.start
    while start < window.end:
        end = min(window.end, start + timedelta(seconds=step * period_s))
        pieces.append(Window(start, end))
        start = end
    return pieces


@dataclass(frozen=True)
class MetricDataRequest:
    """One planned GetMetricData call (its NextToken pages are the paginator's business)."""

    window: Window
    queries: tuple[dict, ...]

    @property
    def datapoints(self) -> int:
        return len(self.queries) * self.window.periods(self._period())

    def _period(self) -> int:
        return self.queries[0]["MetricStat"]["Period"] if self.queries else PERIOD_S

    def params(self) -> dict[str, Any]:
        """Keyword arguments for GetMetricData."""
        return {
            "MetricDataQueries": list(self.queries),
            "StartTime": self.window.start,
            "EndTime": self.window.end,
            "ScanBy": "TimestampAscending",
        }


# --- The round trip -------------------------------------------------------------------------


@dataclass(frozen=True)
class Piece(Generic[T]):
    """One window piece's answer: its calls (pages) and what the concern parsed of them."""

    window: Window
    calls: int
    got: T


class Reading(Generic[T]):
    """A planned collection: the queries it asks, and its pieces, oldest first, as they land.

    Every planned call is paged by boto3's paginator (NextToken); throttling and 5xx answers
    are retried by the client (``apps.lib.aws``'s adaptive mode), and what still fails raises,
    so a failed call never turns into zeros. ``watch`` gets the calls' time ("fetch") and the
    parsing's ("parse")."""

    def __init__(
        self,
        cw: BaseClient,
        requests: Sequence[MetricDataRequest],
        parse: Callable[[Iterable[dict], Window], T],
        *,
        max_datapoints: int | None = None,
        watch: Stopwatch | None = None,
    ) -> None:
        self.cw, self.requests, self.parse = cw, requests, parse
        self.max_datapoints = max_datapoints
        self.watch = watch or Stopwatch()

    @property
    def queries(self) -> int:
        """Distinct queries asked (every piece carries them all)."""
        first = self.requests[0].window if self.requests else None
        return sum(len(r.queries) for r in self.requests if r.window == first)

    def __iter__(self) -> Iterator[Piece[T]]:
        for window, batch in itertools.groupby(self.requests, key=lambda r: r.window):
            with self.watch.part("fetch"):
                pages = [page for request in batch for page in self.pages(request)]
            with self.watch.part("parse"):
                got = self.parse(pages, window)
            yield Piece(window, len(pages), got)

    def pages(self, request: MetricDataRequest) -> Iterator[dict]:
        """Every page of one planned call (``max_datapoints`` a page, if set)."""
        params = request.params()
        if self.max_datapoints is not None:
            params["PaginationConfig"] = {"PageSize": self.max_datapoints}
        yield from self.cw.get_paginator("get_metric_data").paginate(**params)

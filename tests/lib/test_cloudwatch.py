"""The GetMetricData windows shared by EFS and EBS (apps/lib/cloudwatch.py), pure: settled,
period-aligned windows and their cutting into calls under 100,800 data points. The round trip
itself (paginated calls, retries) is tested through each concern's collection against moto
(tests/efs/test_collect.py, tests/ebs/test_collect.py)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.lib.cloudwatch import (
    MAX_DATAPOINTS_PER_CALL,
    Window,
    align,
    batched,
    collection_window,
    split_window,
)

T = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def test_it_cuts_queries_into_calls_of_at_most_500():
    queries = [{"Id": f"q{i}"} for i in range(1001)]
    batches = batched(queries)
    assert [len(b) for b in batches] == [500, 500, 1]
    assert batched([]) == []
    with pytest.raises(ValueError):
        batched(queries, 501)


@pytest.mark.parametrize(
    ("now", "last_end", "expected"),
    [
        # Regular cycle: from the last end to 3 minutes ago, minute-aligned.
        (
            T.replace(second=30),
            T - timedelta(minutes=10),
            (T - timedelta(minutes=10), T - timedelta(minutes=3)),
        ),
        # A last end that is not aligned is rounded down (nothing skipped).
        (
            T,
            T - timedelta(minutes=10, seconds=20),
            (T - timedelta(minutes=11), T - timedelta(minutes=3)),
        ),
        # First run: the forecast window, 3 h.
        (T, None, (T - timedelta(hours=3, minutes=3), T - timedelta(minutes=3))),
        # After a 3-day outage: back-fill only 24 h.
        (T, T - timedelta(days=3), (T - timedelta(hours=24, minutes=3), T - timedelta(minutes=3))),
    ],
)
def test_it_collects_from_the_last_end_to_a_settled_minute(now, last_end, expected):
    window = collection_window(now, last_end)
    assert (window.start, window.end) == expected


def test_it_has_nothing_to_collect_until_a_new_minute_settles():
    assert collection_window(T + timedelta(seconds=59), T - timedelta(minutes=3)) is None
    assert collection_window(T + timedelta(minutes=1), T - timedelta(minutes=3)) == Window(
        T - timedelta(minutes=3), T - timedelta(minutes=2)
    )


def test_it_takes_a_configurable_settle_delay_and_backfill():
    window = collection_window(
        T, T - timedelta(hours=5), settle=timedelta(minutes=10), backfill=timedelta(hours=1)
    )
    assert window == Window(T - timedelta(minutes=70), T - timedelta(minutes=10))


def test_it_treats_naive_times_as_utc():
    assert align(datetime(2026, 3, 2, 12, 0, 42)) == T


def test_it_splits_a_day_of_backfill_into_calls_under_100800_points():
    window = Window(T - timedelta(hours=24), T)
    pieces = split_window(window, 500)
    assert len(pieces) == math.ceil(1440 / 201) == 8
    assert all(p.periods() * 500 <= MAX_DATAPOINTS_PER_CALL for p in pieces)
    assert pieces[0].start == window.start and pieces[-1].end == window.end
    assert all(a.end == b.start for a, b in zip(pieces, pieces[1:], strict=False))


@given(
    st.integers(min_value=1, max_value=5000),
    st.integers(min_value=1, max_value=500),
    st.integers(min_value=0, max_value=3000),
)
def test_split_windows_cover_the_window_exactly(minutes, queries, offset):
    start = T + timedelta(minutes=offset)
    window = Window(start, start + timedelta(minutes=minutes))
    pieces = split_window(window, queries)
    assert pieces[0].start == window.start and pieces[-1].end == window.end
    assert sum(p.periods() for p in pieces) == minutes
    assert all(p.periods() * queries <= MAX_DATAPOINTS_PER_CALL for p in pieces)
    assert len(pieces) == math.ceil(minutes / (MAX_DATAPOINTS_PER_CALL // queries))

"""The shared credit forecast (apps/lib/credits.py) on a percent balance, as EBS reads it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from apps.lib.credits import CreditState, credit_forecast
from apps.lib.formats import span_label

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


def test_it_forecasts_a_burst_balance_in_percent_running_out():
    # 100 % an hour ago, 40 % now: 1 % a minute, so 40 minutes left.
    points = [(NOW - timedelta(minutes=60 - i), 100.0 - i) for i in range(61)]
    forecast = credit_forecast(points, NOW, window=timedelta(hours=1))
    assert forecast.state is CreditState.DRAINING
    assert forecast.seconds_to_exhaustion == pytest.approx(40 * 60)
    assert forecast.drain_per_s == pytest.approx(1 / 60)
    assert forecast.reason == "credits run out in ~40 min at the last 1 h's drain rate"


def test_it_calls_a_zero_balance_exhausted_and_a_missing_one_unknown():
    assert credit_forecast([(NOW, 0.0)], NOW).state is CreditState.EXHAUSTED
    assert credit_forecast([(NOW, None)], NOW).state is CreditState.UNKNOWN


@pytest.mark.parametrize(
    ("minutes", "label"), [(180, "3 h"), (15, "15 min"), (150, "2 h 30 min"), (90, "90 min")]
)
def test_it_writes_a_window_in_words(minutes, label):
    assert span_label(timedelta(minutes=minutes)) == label

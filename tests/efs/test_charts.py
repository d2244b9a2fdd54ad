"""Chart and API series from samples: one x per step, gaps as None."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from apps.efs import charts
from apps.efs.metrics import GIB, Sample

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
STEP = timedelta(minutes=15)


def test_it_puts_each_sample_on_its_x_and_leaves_the_others_as_gaps():
    samples = [
        Sample(T0 - STEP, period_s=900, data_read_count=9000.0),  # before the range: dropped
        Sample(T0, period_s=900, data_read_count=900.0),
        Sample(T0 + timedelta(minutes=7), data_read_count=1.0),  # between two x: dropped
        Sample(T0 + 2 * STEP, period_s=600, data_read_count=1200.0),  # 10 minutes with data
    ]
    xs, columns = charts.grid(samples, T0, T0 + 4 * STEP, STEP)
    assert xs == [int((T0 + i * STEP).timestamp()) for i in range(4)]
    assert columns["read_ops"] == [1.0, None, 2.0, None]
    assert columns["write_ops"] == [None] * 4  # never returned: a gap, not a zero


def test_it_draws_every_chart_over_the_same_xs_and_credits_in_gib():
    samples = [
        Sample(T0 + i * STEP, period_s=900, burst_credit_balance=(i + 1) * GIB / 3)
        for i in range(4)
    ]
    drawn = charts.charts(samples, T0, T0 + 4 * STEP, STEP)
    assert {len(chart["x"]) for chart in drawn.values()} == {4}
    assert drawn["credits"]["series"][0]["values"] == [0.3333, 0.6667, 1.0, 1.3333]
    assert drawn["ops"]["series"][0]["values"] == [None] * 4

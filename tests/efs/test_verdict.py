"""Credit forecast and file system status (apps/efs/verdict.py)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.efs.metrics import GIB, MIB, Sample, baseline_mibps
from apps.efs.replication import Replica
from apps.efs.verdict import (
    CreditState,
    Thresholds,
    credit_forecast,
    credit_step,
    filesystem_verdict,
)
from apps.lib.status import Status

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
HUNDRED_GIB = 100 * GIB
BASELINE_BPS = baseline_mibps(HUNDRED_GIB) * MIB


def _minutes_back(count, *, end=NOW):
    return [end - timedelta(minutes=count - i) for i in range(count)]


def _draining(hours_left=6.0, drain_bps=1 * MIB, minutes=180, noise=0.0, seed=1, end=NOW):
    """Samples of a balance that runs out ``hours_left`` after ``end`` at ``drain_bps``."""
    rng = random.Random(seed)
    balance_at_end = hours_left * 3600 * drain_bps
    samples = []
    for t in _minutes_back(minutes, end=end):
        exact = balance_at_end + (end - t).total_seconds() * drain_bps
        samples.append(
            Sample(
                timestamp=t,
                burst_credit_balance=exact * (1 + rng.uniform(-noise, noise)),
                permitted_throughput=100 * MIB,
                metered_bytes=(BASELINE_BPS + drain_bps) * 60,
                percent_io_limit=20.0,
            )
        )
    return samples


def test_it_forecasts_exhaustion_from_a_steady_drain():
    forecast = credit_forecast([(s.timestamp, s.burst_credit_balance) for s in _draining()], NOW)
    assert forecast.state is CreditState.DRAINING
    assert forecast.drain_bytes_per_s == pytest.approx(MIB)
    assert forecast.seconds_to_exhaustion == pytest.approx(6 * 3600)
    assert forecast.exhaustion_at == NOW + timedelta(hours=6)
    assert forecast.reason == "credits run out in ~6 h at the last 3 h's drain rate"
    assert forecast.line() == [
        (NOW, pytest.approx(6 * 3600 * MIB)),
        (NOW + timedelta(hours=6), 0.0),
    ]


@pytest.mark.parametrize("seed", range(5))
def test_it_is_not_thrown_by_noisy_readings(seed):
    samples = _draining(noise=0.05, seed=seed)
    forecast = credit_forecast([(s.timestamp, s.burst_credit_balance) for s in samples], NOW)
    assert forecast.state is CreditState.DRAINING
    assert forecast.seconds_to_exhaustion == pytest.approx(6 * 3600, rel=0.15)


def test_it_ignores_gaps_rather_than_reading_them_as_an_empty_balance():
    samples = _draining()
    points = [(s.timestamp, s.burst_credit_balance) for s in samples]
    holed = [(t, None if i % 3 else v) for i, (t, v) in enumerate(points)]
    assert credit_forecast(holed, NOW).seconds_to_exhaustion == pytest.approx(6 * 3600)


def test_it_only_looks_at_the_configured_window():
    # Earning hours ago, draining in the last hour.
    old = [(NOW - timedelta(minutes=m), 1e12 - m * 1e6) for m in range(61, 300)]
    recent = [(NOW - timedelta(minutes=m), 1e9 + m * 60 * MIB) for m in range(0, 60)]
    forecast = credit_forecast(old + recent, NOW, window=timedelta(hours=1))
    assert forecast.state is CreditState.DRAINING
    assert forecast.drain_bytes_per_s == pytest.approx(MIB)
    assert "at the last 1 h's drain rate" in forecast.reason


def test_it_says_not_draining_when_earning():
    points = [(t, 1e12 + i * 1e6) for i, t in enumerate(_minutes_back(180))]
    forecast = credit_forecast(points, NOW)
    assert forecast.state is CreditState.NOT_DRAINING
    assert forecast.seconds_to_exhaustion is None
    assert forecast.reason == "credits not draining (earning over the last 3 h)"


def test_it_says_not_draining_when_flat_but_noisy():
    rng = random.Random(7)
    points = [(t, 2e12 * (1 + rng.uniform(-0.01, 0.01))) for t in _minutes_back(180)]
    forecast = credit_forecast(points, NOW)
    assert forecast.state is CreditState.NOT_DRAINING
    assert forecast.line() == []


def test_it_declines_to_forecast_from_too_few_points():
    points = [(t, 1e12 - i * 1e9) for i, t in enumerate(_minutes_back(4))]
    forecast = credit_forecast(points, NOW)
    assert forecast.state is CreditState.UNKNOWN
    assert forecast.reason == "too few credit readings in the last 3 h (4 of 10)"
    assert credit_forecast([], NOW).reason == "no credit balance in the last 3 h"


# --- Verdicts ---------------------------------------------------------------------------------


def test_it_warns_hours_before_the_credits_run_out():
    verdict = filesystem_verdict(_draining(), NOW, standard_bytes=HUNDRED_GIB)
    assert verdict.status is Status.WARNING
    assert verdict.reason == "credits run out in ~6 h at the last 3 h's drain rate"
    assert verdict.figures["hours_to_exhaustion"] == pytest.approx(6)
    assert verdict.figures["baseline_mibps"] == pytest.approx(4.8828125)
    assert verdict.figures["credit_state"] == "draining"


def test_it_is_critical_in_the_last_hour_before_exhaustion():
    verdict = filesystem_verdict(_draining(hours_left=0.5), NOW)
    assert verdict.status is Status.CRITICAL
    assert verdict.reason == "credits run out in ~30 min at the last 3 h's drain rate"


def test_it_is_critical_once_credits_are_exhausted():
    samples = _draining(hours_left=2)[:-1] + [
        Sample(
            timestamp=NOW - timedelta(minutes=1),
            burst_credit_balance=0.0,
            permitted_throughput=BASELINE_BPS,
        )
    ]
    verdict = filesystem_verdict(samples, NOW, standard_bytes=HUNDRED_GIB)
    assert verdict.status is Status.CRITICAL
    assert verdict.reason == "burst credits exhausted: throughput capped at 4.9 MiB/s baseline"
    assert verdict.figures["hours_to_exhaustion"] == 0


def test_it_ignores_credits_outside_bursting_mode():
    verdict = filesystem_verdict(_draining(hours_left=0.5), NOW, throughput_mode="elastic")
    assert verdict.status is Status.OK
    assert "credit_state" not in verdict.figures


def _io_bound(values):
    """Minute samples ending at NOW with these PercentIOLimit values."""
    times = _minutes_back(len(values))
    return [
        Sample(timestamp=t, percent_io_limit=v, burst_credit_balance=2e12)
        for t, v in zip(times, values, strict=True)
    ]


def test_it_warns_when_percent_io_limit_stays_above_90_for_15_minutes():
    verdict = filesystem_verdict(_io_bound([50.0] * 30 + [97.0] * 15), NOW)
    assert verdict.status is Status.WARNING
    assert verdict.reason == "PercentIOLimit above 90 % for 15 min"
    assert verdict.figures["io_limit_pct"] == 97


@pytest.mark.parametrize(
    "tail",
    [
        [50.0] * 6 + [97.0] * 9,  # only 9 minutes
        [97.0] * 7 + [80.0] + [97.0] * 7,  # one dip
        [97.0] * 2 + [None] * 13,  # too little data to judge 15 minutes
    ],
)
def test_it_does_not_warn_on_a_short_io_peak(tail):
    verdict = filesystem_verdict(_io_bound([50.0] * 30 + tail), NOW)
    assert verdict.status is Status.OK


def test_it_warns_when_throughput_stays_near_permitted():
    samples = [
        Sample(timestamp=t, metered_bytes=95 * MIB * 60, permitted_throughput=100 * MIB)
        for t in _minutes_back(20)
    ]
    verdict = filesystem_verdict(samples, NOW, throughput_mode="provisioned")
    assert verdict.status is Status.WARNING
    assert verdict.reason == "throughput above 90 % of permitted for 15 min"


def test_it_joins_reasons_worst_first():
    samples = _draining(hours_left=0.5)
    samples = [Sample(**{**s.__dict__, "percent_io_limit": 99.0}) for s in samples]
    verdict = filesystem_verdict(samples, NOW)
    assert verdict.status is Status.CRITICAL
    assert verdict.reason == (
        "credits run out in ~30 min at the last 3 h's drain rate; "
        "PercentIOLimit above 90 % for 15 min"
    )


def test_it_is_unknown_after_20_minutes_without_data():
    samples = _draining(end=NOW - timedelta(minutes=19)) + [
        Sample(timestamp=NOW - timedelta(minutes=m))
        for m in range(19)  # all gaps
    ]
    verdict = filesystem_verdict(samples, NOW)
    assert verdict.status is Status.UNKNOWN
    assert verdict.reason == "no data for 20 min"
    assert verdict.figures["last_data_at"] == "2026-03-02T11:40:00+00:00"
    assert filesystem_verdict([], NOW).reason == "no data yet"


def test_it_honours_custom_thresholds():
    strict = Thresholds(exhaustion_warning=timedelta(hours=2), stale_after=timedelta(minutes=30))
    assert filesystem_verdict(_draining(), NOW, thresholds=strict).status is Status.OK
    late = _draining(end=NOW - timedelta(minutes=20))
    assert filesystem_verdict(late, NOW, thresholds=strict).status is Status.OK


def test_it_says_what_is_fine_when_ok():
    points = _io_bound([42.0] * 60)
    verdict = filesystem_verdict(points, NOW)
    assert verdict.reason == "ok: 42 % of I/O limit, credits not draining"


# --- Properties -------------------------------------------------------------------------------

_balances = st.lists(
    st.one_of(st.none(), st.floats(min_value=0, max_value=3e12, allow_nan=False)),
    min_size=0,
    max_size=200,
)


@given(_balances)
def test_the_forecast_is_never_negative(balances):
    points = list(zip(_minutes_back(len(balances)), balances, strict=True))
    forecast = credit_forecast(points, NOW)
    if forecast.seconds_to_exhaustion is not None:
        assert forecast.seconds_to_exhaustion >= 0
    if forecast.state is CreditState.DRAINING:
        assert forecast.drain_bytes_per_s > 0
    for _, value in forecast.line():
        assert value >= 0


@given(_balances)
def test_gaps_never_count_as_zero_credits(balances):
    points = list(zip(_minutes_back(len(balances)), balances, strict=True))
    without_gaps = [(t, v) for t, v in points if v is not None]
    assert credit_forecast(points, NOW) == credit_forecast(without_gaps, NOW)
    if all(v is None for v in balances):
        assert credit_forecast(points, NOW).state is CreditState.UNKNOWN


def _build_seconds(balance, *, demand_mibps=20.0, work_gib=35.0):
    """Minutes a build moving ``work_gib`` at ``demand_mibps`` takes under the credit model."""
    left, seconds = work_gib * GIB, 0
    while left > 0:
        step = credit_step(balance, demand_mibps * MIB, HUNDRED_GIB)
        balance, left, seconds = (
            step.balance_bytes,
            left - step.served_bytes_per_s * 60,
            seconds + 60,
        )
    return seconds


def test_it_runs_a_build_about_4x_slower_once_credits_are_gone():
    with_credits = _build_seconds(2.1 * 1024 * GIB)  # a new file system's 2.1 TiB [6]
    without = _build_seconds(0.0)
    assert with_credits == 30 * 60
    assert round(without / with_credits) == 4


def test_it_earns_credits_below_baseline_and_caps_at_baseline_when_empty():
    idle = credit_step(0.0, 0.0, HUNDRED_GIB)
    assert idle.balance_bytes == pytest.approx(BASELINE_BPS * 60)
    assert idle.permitted_bytes_per_s == pytest.approx(BASELINE_BPS)
    empty = credit_step(0.0, 50 * MIB, HUNDRED_GIB)
    assert empty.served_bytes_per_s == pytest.approx(BASELINE_BPS)
    assert empty.balance_bytes == 0
    bursting = credit_step(1e12, 50 * MIB, HUNDRED_GIB)
    assert bursting.permitted_bytes_per_s == 100 * MIB
    assert bursting.balance_bytes == pytest.approx(1e12 - (50 * MIB - BASELINE_BPS) * 60)
    last_drop = credit_step(MIB, 50 * MIB, HUNDRED_GIB)
    assert last_drop.balance_bytes == 0
    assert last_drop.served_bytes_per_s == pytest.approx(BASELINE_BPS + MIB / 60)
    assert credit_step(1e12, 0.0, HUNDRED_GIB, max_balance_bytes=1e12).balance_bytes == 1e12


@given(
    st.floats(min_value=0, max_value=3e12),
    st.floats(min_value=0, max_value=1e10),
    st.floats(min_value=0, max_value=1e14),
)
def test_the_credit_model_never_goes_negative_or_serves_more_than_permitted(
    balance, demand, standard
):
    step = credit_step(balance, demand, standard)
    assert step.balance_bytes >= 0
    assert 0 <= step.served_bytes_per_s <= step.permitted_bytes_per_s + 1e-6
    assert step.served_bytes_per_s <= demand + 1e-6


def test_its_figures_carry_the_headroom_under_the_modes_limits():
    minute = Sample(NOW - timedelta(minutes=1), total_count=2880 * 60, percent_io_limit=84.0)
    figures = filesystem_verdict([minute], NOW).figures
    assert figures["headroom_ops"] == 2880 and figures["headroom_ops_limit"] == pytest.approx(
        2880 / 0.84
    )
    elastic = Sample(
        NOW - timedelta(minutes=1),
        total_count=600.0,
        data_read_bytes=60 * MIB,
        data_read_count=600.0,
    )
    # No Region given: the limit that holds everywhere (20 GiB/s read; 60 in eleven Regions).
    figures = filesystem_verdict([elastic], NOW, throughput_mode="elastic").figures
    assert (
        figures["headroom_read_mibps"] == 1.0 and figures["headroom_read_mibps_limit"] == 20 * 1024
    )
    assert figures["headroom_read_iops_limit"] == 250_000


def test_it_warns_when_read_and_write_share_their_one_documented_limit_above_90_percent():
    # Regional Elastic in ap-east-1: 20 GiB/s read, 1 GiB/s written. 12 GiB/s read (60 %) and
    # 0.6 GiB/s written (60 %) look fine one by one, and are 120 % of the one budget [PERF].
    samples = [
        Sample(
            timestamp=t,
            data_read_bytes=12 * 1024 * MIB * 60,
            data_write_bytes=0.6 * 1024 * MIB * 60,
        )
        for t in _minutes_back(20)
    ]
    verdict = filesystem_verdict(samples, NOW, throughput_mode="elastic", region="ap-east-1")
    assert verdict.status is Status.WARNING
    assert verdict.reason == (
        "read and write throughput above 90 % of their one documented limit for 15 min"
    )
    # us-east-1 allows 60 and 5 GiB/s: the same load is 32 % of it.
    fine = filesystem_verdict(samples, NOW, throughput_mode="elastic", region="us-east-1")
    assert fine.status is Status.OK


def _replica(minutes_ago: float) -> Replica:
    return Replica(
        "fs-0123456789abcdef0", "eu-west-1", "ENABLED", NOW - timedelta(minutes=minutes_ago)
    )


def test_a_stalled_replica_makes_an_otherwise_fine_file_system_warn():
    points = _io_bound([42.0] * 60)
    fine = filesystem_verdict(points, NOW, replicas=[_replica(minutes_ago=4)])
    assert fine.status is Status.OK
    assert fine.reason == "ok: 42 % of I/O limit, credits not draining, replica synced ~4 min ago"
    stalled = filesystem_verdict(points, NOW, replicas=[_replica(minutes_ago=40)])
    assert stalled.status is Status.WARNING
    assert stalled.reason == (
        "replica fs-0123456789abcdef0 (eu-west-1) last synced ~40 min ago (AWS's RPO: 15 min)"
    )
    assert stalled.figures["replica_lag_minutes"] == 40

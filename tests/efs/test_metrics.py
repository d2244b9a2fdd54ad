"""Per-minute derivations, metering, bursting rates and request sizes (apps/efs/metrics.py).

The seed figures of issue 3 and the examples of the fact sheet (shared/fixtures/efs-metrics.md)
are reproduced here.
"""

from __future__ import annotations

import math
from dataclasses import fields
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.efs.documented import LIMITS, mode_limits
from apps.efs.metrics import (
    GIB,
    KIB,
    MIB,
    TIB,
    VALUE_FIELDS,
    Sample,
    average_op_kib,
    baseline_mibps,
    billed_request_bytes,
    burst_mibps,
    capped_slowdown,
    columns_of,
    estimated_io_limit_pct,
    figure_columns,
    implied_ops_limit,
    metered_mibps,
    metered_request_bytes,
    minute_figures,
    op_sizes,
    ops_headroom,
    percentile,
    requests_per_second_at,
    sample_of,
    samples_of,
    throughput_utilisation_pct,
)
from tests.helpers import SHARED_FIXTURES

FIXTURES = SHARED_FIXTURES
FACT_SHEET = (FIXTURES / "efs-metrics.md").read_text()
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "quote",
    [
        "So a file system with 100 MBps can do up to 25,600 4-KB writes per second",
        "30 MiB/s of reads plus 30 MiB/s of writes meter as 10 + 30 = 40 MiB/s",
        "50 KiB/s per GiB of storage",
        "Minimum 1 MiB/s",
        "any file system with credits can burst to 100 MiB/s",
        "Above 1 TiB of Standard storage the burst rate is 100 MiB/s per TiB",
        "Reads are metered at **one-third** the rate",
        "`(Sum/1048576)/PERIOD(m1)`",
        "`(Sum/1024) / SampleCount`",
    ],
)
def test_it_relies_only_on_rules_the_fact_sheet_states(quote):
    assert quote in FACT_SHEET


def test_it_derives_ops_throughput_and_op_size_from_sum_and_samplecount():
    reads = 2880 * 60  # the seed's 2,880 read ops/s over one minute
    sample = Sample(
        timestamp=T0,
        data_read_count=reads,
        data_read_bytes=reads * 4096,
        data_write_count=600,
        data_write_bytes=600 * 64 * 1024,
        metadata_count=1200,
        metadata_bytes=1200 * 512,
        percent_io_limit=84.0,
        client_connections=3,
    )
    figures = minute_figures(sample)
    assert figures.read_ops == 2880
    assert figures.write_ops == 10
    assert figures.metadata_ops == 20
    assert figures.read_mibps == pytest.approx(2880 * 4096 / MIB)  # 11.25 MiB/s
    assert figures.write_mibps == pytest.approx(0.625)
    assert figures.average_read_kib == 4
    assert figures.average_write_kib == 64
    assert figures.io_limit_pct == 84
    assert figures.client_connections == 3
    assert figures.total_ops is None  # TotalIOBytes was not returned: a gap, not zero
    assert figures.throughput_utilisation_pct is None


def test_it_averages_client_connections_over_longer_periods():
    sample = Sample(timestamp=T0, period_s=3600, client_connections=60 * 4)
    assert minute_figures(sample).client_connections == 4


def test_it_computes_utilisation_as_metered_over_permitted():
    sample = Sample(timestamp=T0, metered_bytes=60 * 60 * MIB, permitted_throughput=100 * MIB)
    assert throughput_utilisation_pct(sample) == pytest.approx(60.0)
    assert throughput_utilisation_pct(Sample(timestamp=T0, metered_bytes=1.0)) is None
    assert (
        throughput_utilisation_pct(Sample(T0, metered_bytes=1.0, permitted_throughput=0.0)) is None
    )


def test_it_has_no_average_op_size_without_operations():
    assert average_op_kib(0.0, 0.0) is None
    assert average_op_kib(None, 5.0) is None


# --- The General Purpose I/O budget: today's documented limits, and the seed's -----------------

BURSTING = mode_limits(LIMITS, "regional", "bursting")


def test_it_puts_35000_reads_or_7000_writes_at_the_io_limit_of_a_bursting_file_system():
    # [PERF] today: 35,000 read and 7,000 write operations a second (2018's seed: 3,500/3,000).
    assert estimated_io_limit_pct(35_000, 0, BURSTING) == pytest.approx(100)
    assert estimated_io_limit_pct(0, 7_000, BURSTING) == pytest.approx(100)
    assert estimated_io_limit_pct(17_500, 3_500, BURSTING) == pytest.approx(100)
    provisioned = mode_limits(LIMITS, "regional", "provisioned")
    assert estimated_io_limit_pct(55_000, 0, provisioned) == pytest.approx(100)
    one_zone = mode_limits(LIMITS, "one_zone", "elastic")
    assert estimated_io_limit_pct(0, 7_000, one_zone) == pytest.approx(100)


def test_it_explains_84_percent_at_2880_ops_by_the_limit_the_metric_implies():
    # The seed: 2,880 ops/s at 84 % implies ~3,430 ops/s, whatever the documented ceiling.
    implied = implied_ops_limit(2880, 84)
    assert implied == pytest.approx(3428.6, abs=0.1)
    assert ops_headroom(2880, 84) == pytest.approx(548.6, abs=0.1)
    assert ops_headroom(3500, 100) == 0
    assert implied_ops_limit(0, 0) is None


def test_the_implied_limit_is_the_rate_itself_at_100_percent_to_the_last_bit():
    # The flaky make test: 218,336 operations in a minute at 100 % PercentIOLimit. The rate
    # is 218,336 / 60 = 3638.9333333333334; computed as rate x 100 / 100 it came back as
    # 3638.933333333333, one bit under the rate, and "limit >= used" failed.
    rate = 218_336 / 60
    assert rate * 100.0 / 100 != rate  # the old formula's rounding, kept as the evidence
    assert implied_ops_limit(rate, 100.0) == rate


# --- Metering: data operations at least 32 KiB, metadata 4 KiB, then per KiB [METRICS] ----


@pytest.mark.parametrize(
    ("size", "metadata", "billed"),
    [
        (1, False, 32 * KIB),  # 2018: 4 KiB
        (4 * KIB, False, 32 * KIB),  # 8x the 2018 figure
        (32 * KIB, False, 32 * KIB),
        (32 * KIB + 1, False, 33 * KIB),  # per KiB after the minimum
        (64 * KIB, False, 64 * KIB),
        (512, True, 4 * KIB),
        (4 * KIB + 100, True, 5 * KIB),
    ],
)
def test_it_bills_data_requests_as_at_least_32_kib_and_metadata_as_4_kib(size, metadata, billed):
    assert billed_request_bytes(size, metadata=metadata) == billed


@pytest.mark.parametrize(
    ("size", "is_read", "metered"),
    [
        (4 * KIB, False, 32 * KIB),
        (64 * KIB, False, 64 * KIB),
        (4 * KIB, True, 32 * KIB / 3),  # the billed size, discounted: inference
        (3 * MIB, True, MIB),  # large reads at one third
    ],
)
def test_it_meters_reads_at_a_third_of_their_billed_size(size, is_read, metered):
    assert metered_request_bytes(size, is_read=is_read) == pytest.approx(metered)


def test_it_fits_3200_small_writes_per_second_in_100_mibps():
    # 100 MiB/s / 32 KiB = 3,200 writes of 4 KiB a second (25,600 under the 2018 rule).
    assert requests_per_second_at(100, 4096) == 3_200
    assert requests_per_second_at(100, 100) == 3_200  # tiny writes count as 32 KiB too


def test_it_meters_30_read_plus_30_write_as_40():
    assert metered_mibps(30, 30) == pytest.approx(40)


# --- Bursting rates and the 4x slower build ---------------------------------------------------


@pytest.mark.parametrize(
    ("standard_bytes", "baseline", "burst"),
    [
        (0, 1.0, 100.0),
        (10 * GIB, 1.0, 100.0),  # 0.49 MiB/s raised to the 1 MiB/s minimum
        (100 * GIB, 4.8828125, 100.0),
        (1 * TIB, 50.0, 100.0),
        (2 * TIB, 100.0, 200.0),
        (10 * TIB, 500.0, 1000.0),
    ],
)
def test_it_derives_baseline_and_burst_from_standard_storage(standard_bytes, baseline, burst):
    assert baseline_mibps(standard_bytes) == pytest.approx(baseline)
    assert burst_mibps(standard_bytes) == pytest.approx(burst)


def test_it_gives_a_100_gib_file_system_a_5_mibps_baseline():
    assert round(baseline_mibps(100 * GIB)) == 5


def test_it_slows_a_20_mibps_build_about_4x_once_credits_are_gone():
    standard = 100 * GIB
    with_credits = capped_slowdown(20, burst_mibps(standard))
    without = capped_slowdown(20, baseline_mibps(standard))
    assert with_credits == 1
    assert round(without / with_credits) == 4
    # A build that waits on the file system only half the time slows less.
    assert capped_slowdown(20, baseline_mibps(standard), io_share=0.5) == pytest.approx(
        2.548, abs=0.001
    )


def test_it_refuses_impossible_inputs():
    with pytest.raises(ValueError):
        baseline_mibps(-1)
    with pytest.raises(ValueError):
        capped_slowdown(10, 0)
    with pytest.raises(ValueError):
        metered_request_bytes(-1)


# --- Request sizes ----------------------------------------------------------------------------


def test_it_averages_request_sizes_over_a_range_and_names_those_under_their_minimum():
    minutes = [
        Sample(
            T0,
            data_read_bytes=1000 * 1024.0,
            data_read_count=1000,
            metadata_bytes=512.0 * 60,
            metadata_count=60,
        ),
        Sample(T0 + timedelta(minutes=1)),  # a gap: skipped, not a zero
        Sample(
            T0 + timedelta(minutes=2),
            data_read_bytes=3000 * 1024.0,
            data_read_count=1000,
            data_write_bytes=16 * MIB,
            data_write_count=1024,
        ),
    ]
    sizes = op_sizes(minutes)
    assert sizes.read_kib == pytest.approx(2.0)  # 4,000 KiB over 2,000 reads
    assert sizes.write_kib == pytest.approx(16.0)  # under 32 KiB: small too (2018: not)
    assert sizes.metadata_kib == pytest.approx(0.5)
    assert sizes.small == ["read", "write", "metadata"]
    assert minute_figures(minutes[0]).average_metadata_kib == pytest.approx(0.5)
    assert op_sizes([]).read_kib is None and op_sizes([]).small == []


def test_it_interpolates_percentiles_like_numpy():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile(list(range(101)), 95) == 95
    assert percentile([7], 95) == 7


# --- Properties -------------------------------------------------------------------------------

_maybe = st.one_of(st.none(), st.integers(min_value=0, max_value=10**13).map(float))


@given(st.fixed_dictionaries(dict.fromkeys(VALUE_FIELDS, _maybe)))
def test_it_never_turns_a_gap_into_a_number(values):
    figures = minute_figures(Sample(timestamp=T0, **values))
    pairs = {
        "read_ops": "data_read_count",
        "write_ops": "data_write_count",
        "metadata_ops": "metadata_count",
        "total_ops": "total_count",
        "read_mibps": "data_read_bytes",
        "write_mibps": "data_write_bytes",
        "metadata_mibps": "metadata_bytes",
        "total_mibps": "total_bytes",
        "metered_mibps": "metered_bytes",
        "permitted_mibps": "permitted_throughput",
        "io_limit_pct": "percent_io_limit",
        "burst_credit_balance": "burst_credit_balance",
        "client_connections": "client_connections",
    }
    for figure, source in pairs.items():
        assert (getattr(figures, figure) is None) == (values[source] is None), figure
    for f in fields(figures):
        value = getattr(figures, f.name)
        assert value is None or f.name == "timestamp" or (math.isfinite(value) and value >= 0)


@given(st.lists(st.fixed_dictionaries(dict.fromkeys(VALUE_FIELDS, _maybe)), max_size=5))
def test_it_derives_columns_of_samples_as_it_derives_each_sample(rows):
    samples = [
        Sample(timestamp=T0 + timedelta(minutes=i), period_s=60 * (i + 1), **row)
        for i, row in enumerate(rows)
    ]
    columns = figure_columns(samples)
    for i, sample in enumerate(samples):
        figures = minute_figures(sample)
        assert {name: values[i] for name, values in columns.items()} == {
            f.name: getattr(figures, f.name) for f in fields(figures) if f.name != "timestamp"
        }


@given(st.lists(st.fixed_dictionaries(dict.fromkeys(VALUE_FIELDS, _maybe)), max_size=5))
def test_it_reads_samples_column_by_column_and_back_as_they_were(rows):
    samples = [
        Sample(timestamp=T0 + timedelta(minutes=i), period_s=60 * (i + 1), **row)
        for i, row in enumerate(rows)
    ]
    assert samples_of(columns_of(samples)) == samples
    some = {k: v for k, v in columns_of(samples).items() if k != "data_read_bytes"}
    assert all(s.data_read_bytes is None for s in samples_of(some))  # not read: a gap


@given(st.floats(min_value=0, max_value=1e16))
def test_it_never_gives_less_than_the_minimums(standard_bytes):
    assert baseline_mibps(standard_bytes) >= 1.0
    assert burst_mibps(standard_bytes) >= 100.0
    assert burst_mibps(standard_bytes) >= 2 * baseline_mibps(standard_bytes) - 1e-9 or (
        baseline_mibps(standard_bytes) == 1.0
    )


@given(st.floats(min_value=0, max_value=1e12), st.booleans(), st.booleans())
def test_it_never_bills_a_request_below_its_minimum(size, is_read, metadata):
    least = 4096 if metadata else 32768
    assert billed_request_bytes(size, metadata=metadata) >= least
    assert metered_request_bytes(size, is_read=is_read, metadata=metadata) >= least / 3


def test_a_sample_built_the_fast_way_is_the_same_sample():
    t = datetime(2026, 3, 1, tzinfo=UTC)
    fast = sample_of(t, 60, {"metered_bytes": 1.0, "percent_io_limit": None})
    assert fast == Sample(t, 60, metered_bytes=1.0)
    assert hash(fast) == hash(Sample(t, 60, metered_bytes=1.0))
    assert fast.data_read_bytes is None and fast.has_data()
    with pytest.raises(AttributeError):
        fast.metered_bytes = 2.0  # still frozen

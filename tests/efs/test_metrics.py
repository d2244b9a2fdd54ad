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

from apps.efs.metrics import (
    GIB,
    MIB,
    TIB,
    VALUE_FIELDS,
    Sample,
    average_op_kib,
    baseline_mibps,
    burst_mibps,
    capped_slowdown,
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
    throughput_utilisation_pct,
)
from tests.conftest import SHARED_FIXTURES

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


# --- The seed's General Purpose ceiling -------------------------------------------------------


def test_it_puts_3500_reads_or_3000_writes_at_the_io_limit():
    assert estimated_io_limit_pct(3500) == pytest.approx(100)
    assert estimated_io_limit_pct(0, 3000) == pytest.approx(100)
    assert estimated_io_limit_pct(1750, 1500) == pytest.approx(100)
    assert implied_ops_limit(3500, 100) == pytest.approx(3500)


def test_it_explains_84_percent_at_2880_ops_as_the_same_ceiling():
    # 2,880 ops/s is 82.3 % of 3,500 as a minute average; PercentIOLimit is the minute's
    # Maximum, so the measured 84 % sits a little above, and implies a ~3,430 ops/s ceiling.
    estimate = estimated_io_limit_pct(2880)
    assert estimate == pytest.approx(82.29, abs=0.01)
    assert estimate <= 84 <= estimate + 2
    implied = implied_ops_limit(2880, 84)
    assert implied == pytest.approx(3428.6, abs=0.1)
    assert abs(implied - 3500) / 3500 < 0.025
    assert ops_headroom(2880, 84) == pytest.approx(548.6, abs=0.1)
    assert ops_headroom(3500, 100) == 0
    assert implied_ops_limit(0, 0) is None


# --- Metering ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "is_read", "metered"),
    [
        (1, False, 4096),
        (512, False, 4096),
        (4095, False, 4096),
        (4096, False, 4096),
        (64 * 1024, False, 64 * 1024),
        (6 * 1024, True, 4096),  # a 2 KiB discounted read is still metered as 4 KiB
        (3 * MIB, True, MIB),  # large reads at one third
    ],
)
def test_it_meters_requests_under_4_kib_as_4_kib(size, is_read, metered):
    assert metered_request_bytes(size, is_read=is_read) == metered


def test_it_fits_25600_small_writes_per_second_in_100_mibps():
    assert requests_per_second_at(100, 4096) == 25_600
    assert requests_per_second_at(100, 100) == 25_600  # tiny writes count as 4 KiB too


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


def test_it_averages_request_sizes_over_a_range_and_names_those_under_4_kib():
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
            data_write_bytes=64 * MIB,
            data_write_count=1024,
        ),
    ]
    sizes = op_sizes(minutes)
    assert sizes.read_kib == pytest.approx(2.0)  # 4,000 KiB over 2,000 reads
    assert sizes.write_kib == pytest.approx(64.0)
    assert sizes.metadata_kib == pytest.approx(0.5)
    assert sizes.small == ["read", "metadata"]
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


@given(st.floats(min_value=0, max_value=1e16))
def test_it_never_gives_less_than_the_minimums(standard_bytes):
    assert baseline_mibps(standard_bytes) >= 1.0
    assert burst_mibps(standard_bytes) >= 100.0
    assert burst_mibps(standard_bytes) >= 2 * baseline_mibps(standard_bytes) - 1e-9 or (
        baseline_mibps(standard_bytes) == 1.0
    )


@given(st.floats(min_value=0, max_value=1e12), st.booleans())
def test_it_never_meters_a_request_below_4_kib(size, is_read):
    assert metered_request_bytes(size, is_read=is_read) >= 4096


def test_a_sample_built_the_fast_way_is_the_same_sample():
    t = datetime(2026, 3, 1, tzinfo=UTC)
    fast = sample_of(t, 60, {"metered_bytes": 1.0, "percent_io_limit": None})
    assert fast == Sample(t, 60, metered_bytes=1.0)
    assert hash(fast) == hash(Sample(t, 60, metered_bytes=1.0))
    assert fast.data_read_bytes is None and fast.has_data()
    with pytest.raises(AttributeError):
        fast.metered_bytes = 2.0  # still frozen

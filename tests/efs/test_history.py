"""Saving, reading back, rolling up and choosing the resolution of metric history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from apps.efs import history
from apps.efs.metrics import Sample
from apps.efs.models import FileSystem, MetricHour, MetricMinute
from apps.lib import partitions
from apps.regions.models import Account, Region

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)


@pytest.fixture
def fs() -> FileSystem:
    account = Account.objects.create(name="a")
    region = Region.objects.create(account=account, code="us-east-1")
    return FileSystem.objects.create(region=region, filesystem_id="fs-0123abcd")


def test_it_stores_one_wide_row_per_minute_and_skips_minutes_with_no_value(fs):
    samples = [
        Sample(T0, total_bytes=10.0, total_count=2.0),
        Sample(T0 + timedelta(minutes=1)),  # asked, nothing came
        Sample(T0 + timedelta(minutes=2), percent_io_limit=50.0),
    ]
    assert history.save_samples({fs.pk: samples}) == 2
    # Run twice: an upsert, not a duplicate.
    assert history.save_samples({fs.pk: samples}) == 2
    rows = list(MetricMinute.objects.order_by("ts"))
    assert [r.ts for r in rows] == [T0, T0 + timedelta(minutes=2)]
    assert rows[0].total_bytes == 10.0 and rows[0].percent_io_limit is None


def test_it_reads_back_samples_in_time_order(fs):
    history.save_samples(
        {fs.pk: [Sample(T0 + timedelta(minutes=i), total_bytes=i) for i in (2, 0, 1)]}
    )
    got = history.load_samples([fs.pk], T0, T0 + timedelta(minutes=2))[fs.pk]
    assert [s.total_bytes for s in got] == [0, 1]


def test_it_rolls_old_minutes_into_hours_with_the_right_statistic_each(fs, settings):
    settings.VIGIL_EFS_MINUTE_RETENTION_DAYS = 7
    old = T0 - timedelta(days=10)
    minutes = [
        Sample(
            old + timedelta(minutes=i),
            data_read_bytes=60.0,
            data_read_count=6.0,
            percent_io_limit=float(i),
            burst_credit_balance=1000.0 - i,
            permitted_throughput=100.0,
        )
        for i in range(30)
    ]
    history.save_samples({fs.pk: [*minutes, Sample(T0, total_bytes=1.0)]})

    assert history.rollup(fs, T0) == 1

    hour = MetricHour.objects.get()
    assert hour.ts == old and hour.minutes == 30
    assert hour.data_read_bytes == 1800.0 and hour.data_read_count == 180.0
    assert hour.percent_io_limit == 29.0 and hour.burst_credit_balance == 971.0
    assert hour.permitted_throughput == 100.0 and hour.total_bytes is None
    # SQLite deletes the rolled-up minutes; PostgreSQL drops their day's partition later
    # (tests/lib/test_partitions.py), and the next rollup does not read them again.
    kept = 31 if partitions.partitioned(MetricMinute) else 1  # the recent minute stays
    assert MetricMinute.objects.count() == kept
    assert history.rollup(fs, T0 + timedelta(hours=1)) == 0
    sample = hour.sample()
    assert sample.period_s == 1800  # rates over the minutes that had data


def test_it_deletes_hours_past_their_retention(fs, settings):
    settings.VIGIL_EFS_HOUR_RETENTION_DAYS = 30
    MetricHour.objects.create(filesystem=fs, ts=T0 - timedelta(days=40), minutes=60)
    history.rollup(fs, T0)
    assert not MetricHour.objects.exists()


@pytest.mark.parametrize(
    ("span", "age", "expected"),
    [
        (timedelta(hours=3), timedelta(0), "minute"),
        (timedelta(days=2), timedelta(0), "minute"),
        (timedelta(days=7), timedelta(0), "hour"),
        (timedelta(hours=3), timedelta(days=9), "hour"),  # minutes are gone by then
    ],
)
def test_it_picks_minutes_for_short_recent_ranges_and_hours_otherwise(span, age, expected):
    end = T0 - age
    assert history.resolution_for(end - span, end, T0) == expected


def test_it_downsamples_in_the_database_with_the_right_statistic_each(fs, settings):
    settings.VIGIL_EFS_MINUTE_RETENTION_DAYS = 7
    minutes = [
        Sample(
            T0 + timedelta(minutes=i),
            data_read_bytes=60.0,
            data_read_count=6.0,
            client_connections=3.0,
            percent_io_limit=float(i),
            burst_credit_balance=1000.0 - i,
            permitted_throughput=100.0 + i,
        )
        for i in range(30)
        if i not in (12, 13) and not 20 <= i < 30  # two minutes lost, then ten minutes gone
    ]
    history.save_samples({fs.pk: minutes})
    got = history.load_series(fs.pk, T0, T0 + timedelta(minutes=40), 600, T0)
    # Buckets 10:00 and 10:10 have rows; 10:20 and 10:30 have none: gaps, not zeros.
    assert [s.timestamp for s in got] == [T0, T0 + timedelta(minutes=10)]
    first, second = got
    assert (first.period_s, second.period_s) == (600, 480)  # minutes with data x 60
    assert first.data_read_bytes == 600.0 and second.data_read_count == 48.0  # summed
    assert first.percent_io_limit == 9.0 and second.percent_io_limit == 19.0  # maximum
    assert first.burst_credit_balance == 991.0 and second.burst_credit_balance == 981.0  # min
    assert first.permitted_throughput == pytest.approx(104.5)  # averaged
    # Rates stay rates: 6 reads a minute are 0.1 ops/s at any step, with or without gaps.
    assert second.data_read_count / second.period_s == pytest.approx(0.1)
    assert second.client_connections * 60 / second.period_s == pytest.approx(3.0)


def test_it_reads_hours_before_the_minute_retention_and_minutes_after(fs, settings):
    settings.VIGIL_EFS_MINUTE_RETENTION_DAYS = 7
    now = T0
    kept = history.minute_retention_start(now)
    MetricHour.objects.create(
        filesystem=fs, ts=kept - timedelta(hours=5), minutes=60, total_count=3600.0
    )
    MetricHour.objects.create(
        filesystem=fs, ts=kept - timedelta(hours=4), minutes=30, total_count=900.0
    )
    history.save_samples(
        {fs.pk: [Sample(now - timedelta(minutes=m), total_count=60.0) for m in (1, 2)]}
    )
    start = now - timedelta(days=30)
    step = history.chart_step(start, now, now)
    assert step == 3600 and (now - start).total_seconds() / step <= history.MAX_POINTS
    got = history.load_series(fs.pk, start, now, step, now)
    assert [s.total_count / s.period_s for s in got] == [1.0, 0.5, 1.0]
    assert got[-1].period_s == 120


@pytest.mark.parametrize(
    "span",
    [
        timedelta(hours=3),
        timedelta(hours=24),
        timedelta(days=7),
        timedelta(days=30),
        timedelta(days=400),
    ],
)
def test_it_never_draws_more_than_a_thousand_points(span, settings):
    settings.VIGIL_EFS_MINUTE_RETENTION_DAYS = 7
    step = history.chart_step(T0 - span, T0, T0)
    assert span.total_seconds() / step <= history.MAX_POINTS
    assert step % 60 == 0 and (3600 % step == 0 or step % 3600 == 0)
    if span <= timedelta(hours=3):
        assert step == 60


def test_it_reads_a_months_usage_in_hours_with_the_p95_and_peak_of_the_minutes(fs, settings):
    from apps.efs.costs import billed_bytes
    from apps.efs.metrics import MIB, percentile

    settings.VIGIL_EFS_MINUTE_RETENTION_DAYS = 1
    now = T0 + timedelta(days=3)
    # Two days ago: an hour row (60 minutes, 1 MiB/s metered); 300 reads of 1 KiB billed as
    # 32 KiB each (a data operation's minimum; 4 KiB under the 2018 rule), and 60 metadata
    # operations kept from before the read/write split: billed as reads, at 4 KiB each.
    MetricHour.objects.create(
        filesystem=fs,
        ts=T0 + timedelta(days=1),
        minutes=60,
        metered_bytes=MIB * 3600.0,
        data_read_bytes=300 * 1024.0,
        data_read_count=300.0,
        metadata_bytes=60 * 512.0,
        metadata_count=60.0,
    )
    # The last 90 minutes: a ramp of 0..89 MiB/s, and one gap that is not a zero; each minute
    # 10 writes of 1 MiB and 6 metadata writes of 512 bytes (billed as writes, 4 KiB each).
    start = now - timedelta(minutes=90)
    rates = [float(i) for i in range(90) if i != 45]
    history.save_samples(
        {
            fs.pk: [
                Sample(
                    start + timedelta(minutes=i),
                    metered_bytes=i * MIB * 60.0,
                    data_write_bytes=10 * MIB,
                    data_write_count=10.0,
                    metadata_bytes=6 * 512.0,
                    metadata_count=6.0,
                    metadata_read_bytes=0.0,
                    metadata_read_count=0.0,
                    metadata_write_bytes=6 * 512.0,
                    metadata_write_count=6.0,
                )
                for i in range(90)
                if i != 45
            ]
        }
    )
    other = FileSystem.objects.create(region=fs.region, filesystem_id="fs-0000ffff")
    got = history.usage([fs.pk, other.pk], now - timedelta(days=30), now, now)
    assert other.pk not in got  # no data: no usage, not zeros
    hours, p95, peak = got[fs.pk]
    assert p95 == pytest.approx(percentile(rates, 95)) and peak == 89.0
    assert [h.minutes for h in hours] == [60, 30, 59]  # the hour row, then two clock hours
    assert billed_bytes(300 * 1024.0, 300) == 300 * 32768
    assert hours[0].read_bytes == 300 * 32768 + 60 * 4096
    assert hours[0].unsplit_metadata_bytes == 60 * 4096
    assert sum(h.metered_bytes for h in hours[1:]) == pytest.approx(sum(rates) * MIB * 60)
    assert sum(h.write_bytes for h in hours) == 89 * (10 * MIB + 6 * 4096)
    assert sum(h.read_bytes for h in hours[1:]) == 0
    assert sum(h.unsplit_metadata_bytes for h in hours[1:]) == 0
    # Only hour rows in the window: the p95 and peak of their hourly rates.
    old = history.usage([fs.pk], now - timedelta(days=30), now - timedelta(days=1), now)
    assert old[fs.pk][1:] == (1.0, 1.0)


def test_it_fills_only_the_gaps_when_asked_to_and_counts_what_it_wrote(fs):
    history.save_minutes({fs.pk: {T0: {"total_bytes": 1.0}}})
    later = T0 + timedelta(minutes=1)
    late = {fs.pk: {T0: {"total_bytes": 99.0}, later: {"total_bytes": 2.0, "total_count": 1.0}}}
    assert history.save_minutes(late, only_gaps=True) == 1
    rows = list(MetricMinute.objects.order_by("ts").values_list("total_bytes", "total_count"))
    assert rows == [(1.0, None), (2.0, 1.0)]  # the kept minute is not rewritten
    assert history.save_minutes(late) == 2  # an ordinary save updates
    assert MetricMinute.objects.get(ts=T0).total_bytes == 99.0


def test_it_skips_minutes_that_have_no_value_left(fs):
    # A minute whose only value was dropped (a duplicate) comes as an empty dict: a gap.
    assert history.save_minutes({fs.pk: {T0: {}}}) == 0
    assert not MetricMinute.objects.exists()


def test_it_reads_back_the_exact_moment_of_each_row(fs):
    odd = T0 + timedelta(seconds=7, microseconds=123457)
    history.save_samples({fs.pk: [Sample(odd, total_bytes=1.0), Sample(T0, total_bytes=2.0)]})
    got = history.load_samples([fs.pk], T0, T0 + timedelta(minutes=1))[fs.pk]
    assert [s.timestamp for s in got] == [T0, odd]
    assert all(s.timestamp.tzinfo is UTC for s in got)
    assert got[0] == Sample(T0, total_bytes=2.0)

"""Metric history in the database: save wide samples, read them back at a resolution,
roll old minutes up into hours, and apply the retention settings."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import (
    Avg,
    BigIntegerField,
    Case,
    Count,
    F,
    FloatField,
    Func,
    Max,
    Min,
    Q,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce, Greatest

from apps.lib import partitions

from .costs import HourTotals
from .documented import METERING, Table, value
from .metrics import MIB, VALUE_FIELDS, Sample, percentile, sample_of, samples_of
from .models import FileSystem, MetricHour, MetricMinute

MINUTE = "minute"
HOUR = "hour"
RESOLUTIONS = (MINUTE, HOUR)
#: Ranges up to this long are drawn from minutes (2 days = 2,880 points a series).
MINUTE_RANGE_LIMIT = timedelta(days=2)

#: The bytes and operations read, written and of metadata (sums and sample counts).
IO_FIELDS = (
    "data_read_bytes",
    "data_read_count",
    "data_write_bytes",
    "data_write_count",
    "metadata_bytes",
    "metadata_count",
    "metadata_read_bytes",
    "metadata_read_count",
    "metadata_write_bytes",
    "metadata_write_count",
)
#: Columns that are Sums or SampleCounts: a longer period adds them up.
SUMMED_FIELDS = {
    *IO_FIELDS,
    "total_bytes",
    "total_count",
    "metered_bytes",
    "client_connections",
}
#: Charts draw at most this many points a series; the database averages the rest away.
MAX_POINTS = 1000
#: Chart steps in seconds: a step divides an hour, or is a whole number of hours.
STEPS = (60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


def resolution_for(start: datetime, end: datetime, now: datetime) -> str:
    """Minutes for short, recent ranges; hours for long ones or ones reaching past the
    minute retention (minutes are rolled up and deleted after it)."""
    kept = now - timedelta(days=settings.VIGIL_EFS_MINUTE_RETENTION_DAYS)
    if end - start <= MINUTE_RANGE_LIMIT and start >= kept:
        return MINUTE
    return HOUR


def save_samples(samples_by_pk: dict[int, Iterable[Sample]]) -> int:
    """Upsert one row per file system and minute that has any value; all-gap minutes are
    not stored (an absent row is a gap). Rows written."""
    return _write(
        [
            (pk, s.timestamp, *(getattr(s, f) for f in VALUE_FIELDS))
            for pk, samples in samples_by_pk.items()
            for s in samples
            if s.has_data()
        ]
    )


def save_minutes(
    values: dict[int, dict[datetime, dict[str, float]]], *, only_gaps: bool = False
) -> int:
    """Upsert the minutes that have a value, ``{file system pk: {minute: {field: value}}}``
    (``cloudwatch_plan.Collected.rows``; a field not there is NULL, a gap). With
    ``only_gaps``, a minute that already has a row is left as it is (the late look fills
    gaps and rewrites nothing). Rows written."""
    return _write(
        [
            (pk, minute, *map(fields.get, VALUE_FIELDS))
            for pk, minutes in values.items()
            for minute, fields in minutes.items()
            if fields
        ],
        only_gaps=only_gaps,
    )


#: PostgreSQL: the rows of one save are copied here first, then upserted in one statement.
_STAGE = "efs_minute_stage"


def _write(rows: list[tuple], *, only_gaps: bool = False) -> int:
    """``INSERT … ON CONFLICT (filesystem_id, ts)`` of ``(pk, minute, *VALUE_FIELDS)`` rows,
    ``DO UPDATE`` or, with ``only_gaps``, ``DO NOTHING``.

    PostgreSQL: ``COPY`` into a temporary table, then one ``INSERT … SELECT`` that empties it
    (a fifth of the wall time and under half the CPU of ``executemany``, whose client-side
    binding renders every row's SQL). SQLite: ``executemany``. Neither builds model
    instances: ``bulk_create(update_conflicts=True)`` compiles every value of every row,
    which made saving a back-fill's rows cost more than fetching them.
    """
    if not rows:
        return 0
    q = connection.ops.quote_name
    columns = ", ".join(q(c) for c in ("filesystem_id", "ts", *VALUE_FIELDS))
    conflict = (
        "DO NOTHING"
        if only_gaps
        else "DO UPDATE SET " + ", ".join(f"{q(c)} = excluded.{q(c)}" for c in VALUE_FIELDS)
    )
    table = q(MetricMinute._meta.db_table)
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                f"CREATE TEMPORARY TABLE IF NOT EXISTS {_STAGE} AS SELECT {columns} "
                f"FROM {table} WITH NO DATA"
            )
            with cursor.cursor.copy(f"COPY {_STAGE} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            cursor.execute(
                f"WITH staged AS (DELETE FROM {_STAGE} RETURNING {columns}) "
                f"INSERT INTO {table} ({columns}) SELECT {columns} FROM staged "
                f"ON CONFLICT ({q('filesystem_id')}, {q('ts')}) {conflict}"
            )
            return cursor.rowcount
        sql = (
            f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * (len(VALUE_FIELDS) + 2))}) "
            f"ON CONFLICT ({q('filesystem_id')}, {q('ts')}) {conflict}"
        )
        adapt = connection.ops.adapt_datetimefield_value
        written = 0
        for i in range(0, len(rows), 2000):
            cursor.executemany(sql, [(r[0], adapt(r[1]), *r[2:]) for r in rows[i : i + 2000]])
            written += cursor.rowcount
        return written


#: What a verdict reads (forecast.filesystem_verdict): fewer columns, a faster cycle.
VERDICT_FIELDS = (
    "percent_io_limit",
    "burst_credit_balance",
    "metered_bytes",
    "permitted_throughput",
    "storage_standard_bytes",
    # the headroom under the mode's limits (limits.headroom)
    "total_count",
    "data_read_bytes",
    "data_read_count",
    "data_write_bytes",
    "data_write_count",
    "metadata_count",
    "metadata_read_count",
    "metadata_write_count",
)


def load_samples(
    filesystem_ids: Sequence[int],
    start: datetime,
    end: datetime,
    resolution: str = MINUTE,
    fields: Sequence[str] = VALUE_FIELDS,
) -> dict[int, list[Sample]]:
    """Samples of ``[start, end)`` per file system, ascending; absent rows are gaps. Only
    ``fields`` are read (the others stay None).

    A verdict reads three hours of every file system of a region, some 180 rows each, over
    the same 180 minutes: each minute is read as a number (PostgreSQL) or text (SQLite) and
    turned into a datetime once, not once per row through the driver's timestamp parser."""
    model = MetricMinute if resolution == MINUTE else MetricHour
    if not filesystem_ids:
        return {}
    q = connection.ops.quote_name
    ts = q("ts")
    when = f"date_part('epoch', {ts})" if connection.vendor == "postgresql" else f"{ts} || ''"
    extra = "" if resolution == MINUTE else f", {q('minutes')}"
    sql = (
        f"SELECT {q('filesystem_id')}, {when}, {', '.join(q(f) for f in fields)}{extra} "
        f"FROM {q(model._meta.db_table)} WHERE {q('filesystem_id')} IN "
        f"({', '.join(['%s'] * len(filesystem_ids))}) AND {ts} >= %s AND {ts} < %s "
        f"ORDER BY {q('filesystem_id')}, {ts}"
    )
    adapt = connection.ops.adapt_datetimefield_value
    out: dict[int, list[Sample]] = {pk: [] for pk in filesystem_ids}
    moments: dict[object, datetime] = {}
    n = len(fields)
    with connection.cursor() as cursor:
        cursor.execute(sql, [*filesystem_ids, adapt(start), adapt(end)])
        while batch := cursor.fetchmany(5000):
            for row in batch:
                moment = moments.get(row[1])
                if moment is None:
                    moment = moments[row[1]] = _moment(row[1])
                period = 60 if resolution == MINUTE else max(1, row[-1]) * 60
                values = dict(zip(fields, row[2 : 2 + n], strict=True))
                out[row[0]].append(sample_of(moment, period, values))
    return out


def _moment(raw: float | str) -> datetime:
    """A minute as ``load_samples`` reads it: epoch seconds, or SQLite's UTC text."""
    if isinstance(raw, str):
        moment = datetime.fromisoformat(raw)
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return datetime.fromtimestamp(raw, UTC)


#: What the file system page's charts draw (``charts.charts``): fewer aggregates to compute.
CHART_FIELDS = (
    *IO_FIELDS,
    "metered_bytes",
    "percent_io_limit",
    "burst_credit_balance",
    "permitted_throughput",
    "client_connections",
)


class EpochBucket(Func):
    """The start of the ``seconds``-long bucket holding a timestamp, in Unix seconds (an
    integer, so that both databases group by it and the grid finds it)."""

    output_field = BigIntegerField()

    def __init__(self, expression: str, seconds: int) -> None:
        super().__init__(expression)
        self.seconds = int(seconds)

    def as_sql(self, compiler, connection, **extra):  # PostgreSQL and any other
        template = f"(floor(date_part('epoch', %(expressions)s) / {self.seconds}) * {self.seconds})::bigint"
        return super().as_sql(compiler, connection, template=template, **extra)

    def as_sqlite(self, compiler, connection, **extra):
        # '%%s': Django turns '%%' into '%' when it swaps its placeholders for SQLite's.
        template = f"(CAST(strftime('%%%%s', %(expressions)s) AS INTEGER) / {self.seconds}) * {self.seconds}"
        return super().as_sql(compiler, connection, template=template, **extra)


class EpochSeconds(Func):
    """A timestamp in Unix seconds, its fraction kept (to the millisecond on SQLite, whose
    ``julianday`` doubles lose more)."""

    output_field = FloatField()

    def as_sql(self, compiler, connection, **extra):  # PostgreSQL and any other
        template = "date_part('epoch', %(expressions)s)"
        return super().as_sql(compiler, connection, template=template, **extra)

    def as_sqlite(self, compiler, connection, **extra):
        # '%%s': Django turns '%%' into '%' when it swaps its placeholders for SQLite's.
        x = "%(expressions)s"
        template = f"(strftime('%%%%s', {x}) - strftime('%%%%S', {x}) + strftime('%%%%f', {x}))"
        return super().as_sql(compiler, connection, template=template, **extra)


def _aggregate(name: str):
    if name in SUMMED_FIELDS:
        return Sum(name)
    if name == "percent_io_limit":
        return Max(name)
    if name == "burst_credit_balance":
        return Min(name)
    return Avg(name)


def chart_step(start: datetime, end: datetime, now: datetime) -> int:
    """Seconds per chart point: the smallest step that keeps [start, end) within
    ``MAX_POINTS``, and at least an hour where the range reaches past the minute retention
    (only hourly rows are kept there)."""
    wanted = (end - start).total_seconds() / MAX_POINTS
    step = next((s for s in STEPS if s >= wanted), STEPS[-1])
    if start < minute_retention_start(now):
        step = max(step, 3600)
    return step


def minute_retention_start(now: datetime) -> datetime:
    """Minutes are kept from this hour on; older ones were rolled up into hours."""
    cutoff = now - timedelta(days=settings.VIGIL_EFS_MINUTE_RETENTION_DAYS)
    return cutoff.replace(minute=0, second=0, microsecond=0)


def load_series(
    filesystem_id: int,
    start: datetime,
    end: datetime,
    step_s: int,
    now: datetime,
    fields: Sequence[str] = VALUE_FIELDS,
) -> list[Sample]:
    """Samples of ``[start, end)`` downsampled in the database, one per ``step_s`` bucket
    that has rows (a bucket without rows is a gap): Sums and SampleCounts added,
    PercentIOLimit the maximum, credits the minimum, the rest averaged, and the period the
    minutes with data, so that rates stay rates. Hourly rows before the minute retention,
    minutes after it; ascending."""
    return samples_of(load_columns(filesystem_id, start, end, step_s, now, fields))


def load_columns(
    filesystem_id: int,
    start: datetime,
    end: datetime,
    step_s: int,
    now: datetime,
    fields: Sequence[str] = VALUE_FIELDS,
) -> dict[str, list]:
    """``load_series`` as ``metrics.Columns`` (``"ts"``, ``"period_s"`` and ``fields``): the
    rows as the database returns them, turned column by column into lists, with no object
    per bucket (a Sample per bucket was most of a chart's reading)."""
    step_s = int(step_s)
    split = int(minute_retention_start(now).timestamp()) // step_s * step_s
    split_at = datetime.fromtimestamp(split, UTC)
    series: dict[str, list] = {name: [] for name in ("ts", "period_s", *fields)}
    parts = []
    if start < split_at:
        hours = MetricHour.objects.filter(
            filesystem_id=filesystem_id, ts__gte=start, ts__lt=min(end, split_at)
        )
        parts.append((hours, Sum("minutes"), max(step_s, 3600)))
    if end > split_at:
        minutes = MetricMinute.objects.filter(
            filesystem_id=filesystem_id, ts__gte=max(start, split_at), ts__lt=end
        )
        parts.append((minutes, Count("ts"), step_s))
    for rows, minutes_with_data, seconds in parts:
        fetched = _buckets(rows, minutes_with_data, seconds, fields)
        if not fetched:
            continue
        buckets, n_minutes, *values = zip(*fetched, strict=True)
        series["ts"] += buckets
        series["period_s"] += [max(1, n or 0) * 60 for n in n_minutes]
        for name, column in zip(fields, values, strict=True):
            series[name] += column
    return series


def _buckets(rows, minutes, step_s: int, fields: Sequence[str]) -> list[tuple]:
    """``(bucket start in Unix seconds, minutes with data, *fields' aggregates)`` per bucket
    of ``rows`` that has any, ascending."""
    aggregates = {f"v_{f}": _aggregate(f) for f in fields}
    query = (
        rows.annotate(bucket=EpochBucket("ts", step_s))
        .values("bucket")
        .annotate(n_minutes=minutes, **aggregates)
        .order_by("bucket")
        .values_list("bucket", "n_minutes", *aggregates)
    )
    # Executed as compiled, without the ORM's per-value converters (float() of what is a float
    # already): they were a third of the page's time reading a thousand buckets.
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def rollup(filesystem: FileSystem, now: datetime) -> int:
    """Turn whole hours of minutes older than the minute retention into hour rows, and delete
    hours older than the hour retention. Hours written.

    On SQLite the rolled-up minutes are deleted here; on PostgreSQL they stay until their
    day's partition is dropped whole (``expire-history``, ``roll_up_before``)."""
    cutoff = minute_retention_start(now)
    with transaction.atomic():
        written = _roll_up(filesystem.pk, cutoff)
        if not partitions.partitioned(MetricMinute):
            MetricMinute.objects.filter(filesystem=filesystem, ts__lt=cutoff).delete()
        keep_hours = now - timedelta(days=settings.VIGIL_EFS_HOUR_RETENTION_DAYS)
        MetricHour.objects.filter(filesystem=filesystem, ts__lt=keep_hours).delete()
    return written


def roll_up_before(cutoff: datetime) -> datetime:
    """Before minutes older than ``cutoff`` go (``apps.lib.retention``, their partitions on
    PostgreSQL): every file system's whole hours before it rolled up, those that no
    collection's rollup has reached yet (its region's worker was down, or it runs later in the
    hour). The cutoff rolled up to, the hour that holds ``cutoff``."""
    until = cutoff.replace(minute=0, second=0, microsecond=0)
    for pk in FileSystem.objects.order_by("pk").values_list("pk", flat=True):
        with transaction.atomic():
            _roll_up(pk, until)
    return until


def _roll_up(filesystem_id: int, until: datetime) -> int:
    """Hour rows for the minutes before ``until`` (an hour) that come after the file system's
    newest hour row (so minutes kept after their rollup are not read again); rows written."""
    done = MetricHour.objects.filter(filesystem_id=filesystem_id, ts__lt=until).aggregate(
        last=Max("ts")
    )["last"]
    old = MetricMinute.objects.filter(filesystem_id=filesystem_id, ts__lt=until)
    if done is not None:
        old = old.filter(ts__gte=done + timedelta(hours=1))
    hours: dict[datetime, list[tuple]] = {}
    for row in old.order_by("ts").values_list("ts", *VALUE_FIELDS).iterator(chunk_size=5000):
        hours.setdefault(row[0].replace(minute=0, second=0, microsecond=0), []).append(row[1:])
    rows = [_hour_row(filesystem_id, hour, minutes) for hour, minutes in hours.items()]
    if rows:
        MetricHour.objects.bulk_create(
            rows,
            batch_size=500,
            update_conflicts=True,
            unique_fields=["filesystem", "ts"],
            update_fields=[*VALUE_FIELDS, "minutes"],
        )
    return len(rows)


def _hour_row(filesystem_id: int, hour: datetime, minutes: list[tuple]) -> MetricHour:
    values: dict[str, float | None] = {}
    for i, name in enumerate(VALUE_FIELDS):
        known = [m[i] for m in minutes if m[i] is not None]
        if not known:
            values[name] = None
        elif name in SUMMED_FIELDS:
            values[name] = sum(known)
        elif name == "percent_io_limit":
            values[name] = max(known)
        elif name == "burst_credit_balance":
            values[name] = min(known)
        else:
            values[name] = sum(known) / len(known)
    return MetricHour(filesystem_id=filesystem_id, ts=hour, minutes=len(minutes), **values)


# --- Usage for the cost model (costs.workload_from) -------------------------------------------


def _billed(bytes_field: str, count_field: str, minimum: float):
    """Bytes Elastic bills for a row's requests of one kind: at least ``minimum`` each
    (``costs.billed_bytes``: 32 KiB a data operation, 4 KiB a metadata one)."""
    zero = Value(0.0, output_field=FloatField())
    return Greatest(
        Coalesce(F(bytes_field), zero),
        Coalesce(F(count_field), zero) * Value(float(minimum), output_field=FloatField()),
        output_field=FloatField(),
    )


def _billing(metering: Table) -> dict:
    """The billed reads, writes and unsplit metadata of a row, as SQL: metadata reads billed as
    reads and metadata writes as writes [SIZES]; a row without the split (MetadataReadIOBytes
    and MetadataWriteIOBytes both missing) bills its MetadataIOBytes as reads (a floor)."""
    data = value(metering, "data_minimum_bytes")
    meta = value(metering, "metadata_minimum_bytes")
    unsplit = Q(metadata_read_count__isnull=True, metadata_write_count__isnull=True)
    zero = Value(0.0, output_field=FloatField())
    unsplit_meta = Case(
        When(unsplit, then=_billed("metadata_bytes", "metadata_count", meta)),
        default=zero,
        output_field=FloatField(),
    )
    return {
        "read": _billed("data_read_bytes", "data_read_count", data)
        + _billed("metadata_read_bytes", "metadata_read_count", meta)
        + unsplit_meta,
        "write": _billed("data_write_bytes", "data_write_count", data)
        + _billed("metadata_write_bytes", "metadata_write_count", meta),
        "unsplit": unsplit_meta,
    }


def usage(
    filesystem_ids: Sequence[int],
    start: datetime,
    end: datetime,
    now: datetime,
    metering: Table = METERING,
) -> dict[int, tuple[list[HourTotals], float, float]]:
    """Per file system: its hours of ``[start, end)`` that had MeteredIOBytes, in time order
    (metered bytes, and reads and writes as Elastic bills them, ``metering`` the minimums), and
    the p95 and peak of its
    per-minute metered MiB/s. Hours before the minute retention come from the hour rows; the
    p95 and peak from the minutes kept (hourly averages when none are), computed in the
    database with window functions so that a region's file systems cost three queries."""
    kept = max(start, minute_retention_start(now))
    billing = _billing(metering)
    out: dict[int, tuple[list[HourTotals], float, float]] = {}
    hours: dict[int, list[tuple[datetime, HourTotals]]] = {pk: [] for pk in filesystem_ids}
    old = (
        MetricHour.objects.filter(
            filesystem_id__in=filesystem_ids,
            ts__gte=start,
            ts__lt=kept,
            metered_bytes__isnull=False,
        )
        .annotate(**billing)
        .values_list("filesystem_id", "ts", "minutes", "metered_bytes", "read", "write", "unsplit")
    )
    for pk, ts, minutes, metered, read, write, unsplit in old.iterator(chunk_size=5000):
        hours[pk].append((ts, HourTotals(max(1, minutes), metered, read, write, unsplit)))
    recent = (
        MetricMinute.objects.filter(
            filesystem_id__in=filesystem_ids, ts__gte=kept, ts__lt=end, metered_bytes__isnull=False
        )
        .annotate(bucket=EpochBucket("ts", 3600))
        .values("filesystem_id", "bucket")
        .annotate(
            n=Count("metered_bytes"),
            metered=Sum("metered_bytes"),
            read=Sum(billing["read"]),
            write=Sum(billing["write"]),
            unsplit=Sum(billing["unsplit"]),
        )
        .values_list("filesystem_id", "bucket", "n", "metered", "read", "write", "unsplit")
    )
    for pk, bucket, n, metered, read, write, unsplit in recent.iterator(chunk_size=5000):
        when = datetime.fromtimestamp(bucket, UTC)
        hours[pk].append((when, HourTotals(n, metered, read, write, unsplit)))
    ranks = _minute_percentiles(filesystem_ids, kept, end)
    for pk in filesystem_ids:
        ordered = [h for _, h in sorted(hours[pk], key=lambda item: item[0])]
        if not ordered:
            continue
        if pk in ranks:
            p95, peak = ranks[pk]
        else:
            rates = [h.metered_bytes / MIB / (h.minutes * 60) for h in ordered]
            p95, peak = percentile(rates, 95), max(rates)
        out[pk] = (ordered, p95, peak)
    return out


def _minute_percentiles(
    filesystem_ids: Sequence[int], start: datetime, end: datetime
) -> dict[int, tuple[float, float]]:
    """(p95, peak) of the per-minute metered MiB/s of each file system over [start, end):
    the two rows around the 95th percentile's rank (interpolated as ``metrics.percentile``
    does) and the last row, picked by ROW_NUMBER in the database (SQLite and PostgreSQL)."""
    if not filesystem_ids or start >= end:
        return {}
    q = connection.ops.quote_name
    adapt = connection.ops.adapt_datetimefield_value
    marks = ", ".join(["%s"] * len(filesystem_ids))
    sql = (
        "SELECT fs, rn, n, v FROM ("
        f"SELECT {q('filesystem_id')} AS fs, {q('metered_bytes')} AS v, "
        f"ROW_NUMBER() OVER (PARTITION BY {q('filesystem_id')} ORDER BY {q('metered_bytes')}) AS rn, "
        f"COUNT(*) OVER (PARTITION BY {q('filesystem_id')}) AS n "
        f"FROM {q(MetricMinute._meta.db_table)} "
        f"WHERE {q('filesystem_id')} IN ({marks}) AND {q('ts')} >= %s AND {q('ts')} < %s "
        f"AND {q('metered_bytes')} IS NOT NULL"
        ") ranked WHERE rn = ((n - 1) * 95) / 100 + 1 OR rn = ((n - 1) * 95 + 99) / 100 + 1 "
        "OR rn = n"
    )
    picked: dict[int, dict[int, float]] = {}
    counts: dict[int, int] = {}
    with connection.cursor() as cursor:
        cursor.execute(sql, [*filesystem_ids, adapt(start), adapt(end)])
        for fs, rn, n, value in cursor.fetchall():
            picked.setdefault(fs, {})[rn] = value / MIB / 60
            counts[fs] = n
    out = {}
    for fs, values in picked.items():
        n = counts[fs]
        rank = (n - 1) * 95 / 100
        low = (n - 1) * 95 // 100
        high = ((n - 1) * 95 + 99) // 100
        p95 = values[low + 1] + (values[high + 1] - values[low + 1]) * (rank - low)
        out[fs] = (p95, values[n])
    return out

"""Metric rows in the database: save the minutes a collection read, read them back as samples
(for the verdict, the charts and the advice). Rows are written in bulk, one statement per
batch of rows (``INSERT … ON CONFLICT``), never one model instance a row."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from django.db import connection, models, transaction

from .cloudwatch_plan import Rows
from .limits import INSTANCE_FIELDS, VOLUME_FIELDS
from .metrics import InstanceSample, VolumeSample
from .models import InstanceMinute, VolumeMinute

BATCH = 2000


def _write(model: type[models.Model], key: str, fields: Sequence[str], rows: list[tuple]) -> int:
    """Upsert ``(pk, minute, *fields)`` rows on (``key``, minute): a value read again
    replaces the old one, a field not read stays as it was."""
    if not rows:
        return 0
    q = connection.ops.quote_name
    columns = ", ".join(q(c) for c in (key, "ts", *fields))
    update = ", ".join(
        f"{q(c)} = COALESCE(excluded.{q(c)}, {q(model._meta.db_table)}.{q(c)})" for c in fields
    )
    sql = (
        f"INSERT INTO {q(model._meta.db_table)} ({columns}) "
        f"VALUES ({', '.join(['%s'] * (len(fields) + 2))}) "
        f"ON CONFLICT ({q(key)}, {q('ts')}) DO UPDATE SET {update}"
    )
    adapt = connection.ops.adapt_datetimefield_value
    with transaction.atomic(), connection.cursor() as cursor:
        for i in range(0, len(rows), BATCH):
            cursor.executemany(sql, [(r[0], adapt(r[1]), *r[2:]) for r in rows[i : i + BATCH]])
    return len(rows)


def save(
    volumes: Rows, instances: Rows, volume_pks: dict[str, int], instance_pks: dict[str, int]
) -> int:
    """Upsert the minutes of ``Answers.volumes`` / ``.instances`` that have a value; rows."""
    volume_rows = [
        (volume_pks[vid], minute, *map(values.get, VOLUME_FIELDS))
        for vid, minutes in volumes.items()
        if vid in volume_pks
        for minute, values in minutes.items()
        if values
    ]
    instance_rows = [
        (instance_pks[iid], minute, *map(values.get, INSTANCE_FIELDS))
        for iid, minutes in instances.items()
        if iid in instance_pks
        for minute, values in minutes.items()
        if values
    ]
    return _write(VolumeMinute, "volume_id", VOLUME_FIELDS, volume_rows) + _write(
        InstanceMinute, "instance_id", INSTANCE_FIELDS, instance_rows
    )


def _read(model, key: str, fields: Sequence[str], pks: Sequence[int], start, end) -> list[tuple]:
    if not pks:
        return []
    q = connection.ops.quote_name
    ts = q("ts")
    when = f"date_part('epoch', {ts})" if connection.vendor == "postgresql" else f"{ts} || ''"
    sql = (
        f"SELECT {q(key)}, {when}, {', '.join(q(f) for f in fields)} "
        f"FROM {q(model._meta.db_table)} WHERE {q(key)} IN ({', '.join(['%s'] * len(pks))}) "
        f"AND {ts} >= %s AND {ts} < %s ORDER BY {q(key)}, {ts}"
    )
    adapt = connection.ops.adapt_datetimefield_value
    with connection.cursor() as cursor:
        cursor.execute(sql, [*pks, adapt(start), adapt(end)])
        return cursor.fetchall()


def _moment(raw: float | str, seen: dict) -> datetime:
    found = seen.get(raw)
    if found is None:
        if isinstance(raw, str):
            found = datetime.fromisoformat(raw)
            found = found.replace(tzinfo=UTC) if found.tzinfo is None else found.astimezone(UTC)
        else:
            found = datetime.fromtimestamp(raw, UTC)
        seen[raw] = found
    return found


def volume_samples(
    pks: Sequence[int], start: datetime, end: datetime
) -> dict[int, list[VolumeSample]]:
    """Samples of ``[start, end)`` per volume, ascending; absent rows are gaps."""
    out: dict[int, list[VolumeSample]] = {pk: [] for pk in pks}
    seen: dict = {}
    for pk, raw, *values in _read(VolumeMinute, "volume_id", VOLUME_FIELDS, pks, start, end):
        out[pk].append(VolumeSample(_moment(raw, seen), 60, *values))
    return out


def instance_samples(
    pks: Sequence[int], start: datetime, end: datetime
) -> dict[int, list[InstanceSample]]:
    out: dict[int, list[InstanceSample]] = {pk: [] for pk in pks}
    seen: dict = {}
    for pk, raw, *values in _read(InstanceMinute, "instance_id", INSTANCE_FIELDS, pks, start, end):
        out[pk].append(InstanceSample(_moment(raw, seen), 60, *values))
    return out

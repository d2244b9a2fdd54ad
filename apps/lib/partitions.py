"""Day partitions of the biggest history tables on PostgreSQL: probe results and EFS minutes.

``probes_result`` and ``efs_metricminute`` are partitioned by range of their time, one partition
a day (``probes_result_p20261124``) and a default one for a day that has none. ``ensure`` makes
the days, ``drop_before`` drops expired ones whole (never row by row), ``maintain`` does both
for ``apps.lib.retention``'s hourly ``expire-history``, ``ahead_after_migrate`` makes the days
ahead after ``migrate``, and ``by_day`` is a migration's operation that turns a plain table into
a partitioned one. SQLite has no partitions: ``partitioned()`` is False there. What it costs and
saves: docs/retention.md; the layers: docs/architecture.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.apps import AppConfig
from django.db import connection, models, transaction
from django.db.backends.utils import CursorWrapper
from django.db.migrations import RunPython
from django.utils import timezone

AHEAD_DAYS = 7  # partitions made ahead of today, so an insert never waits for one
LOCK_TIMEOUT = "5s"


def partitioned(model: type[models.Model]) -> bool:
    """Whether ``model``'s table is a partitioned table (PostgreSQL only)."""
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relkind = 'p' FROM pg_class WHERE oid = to_regclass(%s)",
            [model._meta.db_table],
        )
        row = cursor.fetchone()
    return bool(row and row[0])


def partition_name(table: str, day: date) -> str:
    return f"{table}_p{day:%Y%m%d}"


def default_name(table: str) -> str:
    return f"{table}_default"


def days(model: type[models.Model]) -> dict[date, str]:
    """The day partitions of ``model``'s table, by day."""
    table = model._meta.db_table
    pattern = re.compile(rf"^{re.escape(table)}_p(\d{{8}})$")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "WHERE i.inhparent = to_regclass(%s)",
            [table],
        )
        names = [name for (name,) in cursor.fetchall()]
    found = {}
    for name in names:
        if match := pattern.match(name):
            found[datetime.strptime(match[1], "%Y%m%d").date()] = name
    return found


def _key(table: str) -> str:
    """The column ``table`` is partitioned by (its first key column)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT a.attname FROM pg_partitioned_table p JOIN pg_attribute a "
            "ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0] "
            "WHERE p.partrelid = to_regclass(%s)",
            [table],
        )
        return cursor.fetchone()[0]


def _bounds(day: date) -> tuple[datetime, datetime]:
    start = datetime.combine(day, time(), tzinfo=UTC)
    return start, start + timedelta(days=1)


def ensure(model: type[models.Model], first: date, last: date) -> list[str]:
    """Create the missing day partitions from ``first`` to ``last``; their names."""
    table = model._meta.db_table
    field = _key(table)
    have = days(model)
    made = []
    day = first
    while day <= last:
        if day not in have:
            made.append(_create(table, field, day))
        day += timedelta(days=1)
    return made


def _create(table: str, field: str, day: date) -> str:
    name = partition_name(table, day)
    low, high = _bounds(day)
    q = connection.ops.quote_name
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
        cursor.execute(
            f"CREATE TABLE {q(name)} (LIKE {q(table)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)"
        )
        # Rows of that day that went to the default partition move to their own first:
        # attaching checks that the default holds none of the new range.
        cursor.execute(
            f"WITH moved AS (DELETE FROM {q(default_name(table))} "
            f"WHERE {q(field)} >= %s AND {q(field)} < %s RETURNING *) "
            f"INSERT INTO {q(name)} SELECT * FROM moved",
            [low, high],
        )
        cursor.execute(
            f"ALTER TABLE {q(table)} ATTACH PARTITION {q(name)} FOR VALUES FROM (%s) TO (%s)",
            [low, high],
        )
    return name


def expired_days(model: type[models.Model], cutoff: datetime) -> list[str]:
    """The day partitions that end at or before ``cutoff``, oldest first."""
    return [name for day, name in sorted(days(model).items()) if _bounds(day)[1] <= cutoff]


def drop_before(model: type[models.Model], cutoff: datetime) -> int:
    """Drop every day partition that ends at or before ``cutoff``; the rows they held."""
    q = connection.ops.quote_name
    dropped = 0
    for name in expired_days(model, cutoff):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
            cursor.execute(f"SELECT count(*) FROM {q(name)}")
            rows = cursor.fetchone()[0]
            cursor.execute(f"DROP TABLE {q(name)}")
        dropped += rows
    return dropped


def expire_default(model: type[models.Model], cutoff: datetime, batch: int) -> int:
    """Delete the default partition's rows older than ``cutoff``, ``batch`` at a time."""
    q = connection.ops.quote_name
    table = q(default_name(model._meta.db_table))
    field = q(_key(model._meta.db_table))
    deleted = 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                f"DELETE FROM {table} WHERE ctid = ANY(ARRAY("
                f"SELECT ctid FROM {table} WHERE {field} < %s LIMIT %s))",
                [cutoff, batch],
            )
            deleted += cursor.rowcount
        if cursor.rowcount < batch:
            return deleted


def _default_expired(model: type[models.Model], cutoff: datetime) -> bool:
    q = connection.ops.quote_name
    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT 1 FROM {q(default_name(table))} WHERE {q(_key(table))} < %s LIMIT 1",
            [cutoff],
        )
        return cursor.fetchone() is not None


def maintain(
    model: type[models.Model],
    cutoff: datetime,
    now: datetime,
    batch: int,
    before_expiry: Callable[[datetime], datetime] | None = None,
) -> int:
    """Partitions from the retention's first day to ``AHEAD_DAYS`` ahead, the expired ones
    dropped, the default partition's expired rows deleted; rows removed.

    When something is to go, ``before_expiry(cutoff)`` runs first and returns the cutoff to
    use instead (at most ``cutoff``): what the rows are summarised into is written up to it."""
    ensure(model, cutoff.date(), now.date() + timedelta(days=AHEAD_DAYS))
    if before_expiry is not None:
        if not (expired_days(model, cutoff) or _default_expired(model, cutoff)):
            return 0
        cutoff = min(cutoff, before_expiry(cutoff))
    return drop_before(model, cutoff) + expire_default(model, cutoff, batch)


def ensure_ahead(model: type[models.Model], now: datetime) -> list[str]:
    """Yesterday's partition, today's and ``AHEAD_DAYS`` more, when the table is partitioned
    (yesterday: a fresh install's first EFS collection back-fills the last 24 hours)."""
    if not partitioned(model):
        return []
    return ensure(model, now.date() - timedelta(days=1), now.date() + timedelta(days=AHEAD_DAYS))


def ahead_after_migrate(sender: AppConfig, **kwargs: Any) -> None:
    """``post_migrate`` receiver (connected by the apps that have such tables): today's
    partition and the days ahead of each of the app's partitioned tables."""
    for model in sender.get_models():
        ensure_ahead(model, timezone.now())


def by_day(app_label: str, model_name: str, field: str, batch: int = 50_000) -> RunPython:
    """A migration's operation: ``partition_by_day`` on the model (nothing on SQLite);
    reversing leaves the table partitioned (the model is the same either way)."""

    def forwards(apps: Any, schema_editor: Any) -> None:
        partition_by_day(apps.get_model(app_label, model_name), field, batch)

    return RunPython(forwards, RunPython.noop)


def partition_by_day(model: type[models.Model], field: str, batch: int) -> None:
    """Make ``model``'s plain table partitioned by range of ``field``, one partition a day.

    A migration's step (``atomic = False``). The new table has the old one's columns, defaults,
    identity, checks, constraints and indexes, under the same names; PostgreSQL wants the
    partition key in the primary key, so it becomes ``(id, field)`` in SQL while Django still
    treats ``id`` as the primary key (ids come from the identity sequence, so they stay unique),
    and every unique constraint must hold ``field`` already. It gets a day partition for each
    day the table holds rows of and ``AHEAD_DAYS`` more, and a default partition.

    The rows are copied ``batch`` by id, each batch its own transaction, then the old table is
    dropped: it needs the table's size again on disk while it runs, and writers should be
    stopped (run it before starting the workers). It ends with ``ANALYZE``: without statistics
    the copied partitions were read by slow plans (one probe target's results: 150 ms instead of
    20) until autovacuum got to them.
    """
    if connection.vendor != "postgresql" or partitioned(model):
        return
    table, pk = model._meta.db_table, model._meta.pk.column
    old = f"{table}_unpartitioned"
    q = connection.ops.quote_name
    with transaction.atomic(), connection.cursor() as cursor:
        constraints, indexes = _set_aside(cursor, table, old)
        _create_partitioned(cursor, table, old, pk, field, constraints, indexes)
        cursor.execute(f"SELECT min({q(field)}), max({q(pk)}) FROM {q(old)}")
        oldest, last = cursor.fetchone()
    today = timezone.now().date()
    ensure(model, oldest.date() if oldest else today, today + timedelta(days=AHEAD_DAYS))
    done = 0
    while last is not None and done < last:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {q(table)} SELECT * FROM {q(old)} WHERE {q(pk)} > %s AND {q(pk)} <= %s",
                [done, done + batch],
            )
        done += batch
    with transaction.atomic(), connection.cursor() as cursor:
        if last is not None:
            cursor.execute("SELECT setval(pg_get_serial_sequence(%s, %s), %s)", [table, pk, last])
        cursor.execute(f"DROP TABLE {q(old)}")
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {q(table)}")


def _set_aside(cursor: CursorWrapper, table: str, old: str) -> tuple[list[tuple], list[tuple]]:
    """Rename the plain ``table`` to ``old``, and its constraints and indexes out of the way (to
    ``<name>_unpartitioned``; its foreign keys dropped) so that the partitioned table can take
    their names; what they were: (name, kind, definition) of each primary key, unique and
    foreign key constraint, (name, definition) of each other index."""
    q = connection.ops.quote_name

    def aside(name: str) -> str:  # index names are the schema's: the new table takes them
        return q(f"{name[:48]}_unpartitioned")

    cursor.execute(
        "SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE conrelid = to_regclass(%s) AND contype IN ('p', 'u', 'f') ORDER BY contype",
        [table],
    )
    constraints = cursor.fetchall()
    cursor.execute(
        "SELECT c.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i "
        "JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = to_regclass(%s) "
        "AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)",
        [table],
    )
    indexes = cursor.fetchall()
    cursor.execute(f"ALTER TABLE {q(table)} RENAME TO {q(old)}")
    for name, kind, _sql in constraints:
        if kind == "f":
            cursor.execute(f"ALTER TABLE {q(old)} DROP CONSTRAINT {q(name)}")
        else:
            cursor.execute(f"ALTER TABLE {q(old)} RENAME CONSTRAINT {q(name)} TO {aside(name)}")
    for name, _sql in indexes:
        cursor.execute(f"ALTER INDEX {q(name)} RENAME TO {aside(name)}")
    return constraints, indexes


def _create_partitioned(
    cursor: CursorWrapper,
    table: str,
    old: str,
    pk: str,
    field: str,
    constraints: list[tuple],
    indexes: list[tuple],
) -> None:
    """``table`` anew, like ``old`` but partitioned by range of ``field``, with ``old``'s
    constraints (the primary key on ``pk`` and ``field``) and indexes, and a default
    partition."""
    q = connection.ops.quote_name
    cursor.execute(
        f"CREATE TABLE {q(table)} (LIKE {q(old)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS "
        f"INCLUDING IDENTITY) PARTITION BY RANGE ({q(field)})"
    )
    for name, kind, sql in constraints:
        if kind == "p":
            sql = f"PRIMARY KEY ({q(pk)}, {q(field)})"
        cursor.execute(f"ALTER TABLE {q(table)} ADD CONSTRAINT {q(name)} {sql}")
    for _name, sql in indexes:  # "CREATE INDEX name ON public.table ...": the new table now
        cursor.execute(sql)
    cursor.execute(f"CREATE TABLE {q(default_name(table))} PARTITION OF {q(table)} DEFAULT")

"""Day partitions of the biggest history table, probe results, on PostgreSQL.

``probes_result`` is a table partitioned by range of ``created`` (migration
``probes.0004_result_partitions``), one partition a day named ``probes_result_p20261124``, and
a default partition for rows of a day that has none (normally empty). Expiry drops a day's
partition whole once its last instant is past the retention, instead of deleting its rows one
by one: rows are kept for the retention plus up to a day.

- ``ensure(model, first, last)``: the day partitions from ``first`` to ``last`` (dates), each
  created apart and attached (``ATTACH PARTITION`` takes a lock that lets reads and writes
  through), after moving any row of that day out of the default partition;
- ``drop_before(model, cutoff)``: drops the partitions that end at or before ``cutoff``, each
  with a short lock timeout (a partition that cannot be dropped now is dropped next hour);
- ``maintain(model, cutoff, now, batch)``: both, and the default partition's expired rows
  deleted in batches; ``apps.lib.retention`` calls it hourly from the beat's
  ``expire-history``, and ``post_migrate`` calls ``ensure`` for the days ahead.

SQLite has no partitions: ``partitioned()`` is False there, and retention deletes in batches.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta

from django.db import connection, models, transaction

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


def _bounds(day: date) -> tuple[datetime, datetime]:
    start = datetime.combine(day, time(), tzinfo=UTC)
    return start, start + timedelta(days=1)


def ensure(model: type[models.Model], first: date, last: date) -> list[str]:
    """Create the missing day partitions from ``first`` to ``last``; their names."""
    table = model._meta.db_table
    field = model._meta.get_field("created").column
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


def drop_before(model: type[models.Model], cutoff: datetime) -> int:
    """Drop every day partition that ends at or before ``cutoff``; the rows they held."""
    q = connection.ops.quote_name
    dropped = 0
    for day, name in sorted(days(model).items()):
        if _bounds(day)[1] > cutoff:
            break
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
    field = q(model._meta.get_field("created").column)
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


def maintain(model: type[models.Model], cutoff: datetime, now: datetime, batch: int) -> int:
    """Partitions from the retention's first day to ``AHEAD_DAYS`` ahead, the expired ones
    dropped, the default partition's expired rows deleted; rows removed."""
    ensure(model, cutoff.date(), now.date() + timedelta(days=AHEAD_DAYS))
    return drop_before(model, cutoff) + expire_default(model, cutoff, batch)


def ensure_ahead(model: type[models.Model], now: datetime) -> list[str]:
    """Today's partition and ``AHEAD_DAYS`` more, when the table is partitioned."""
    if not partitioned(model):
        return []
    return ensure(model, now.date(), now.date() + timedelta(days=AHEAD_DAYS))

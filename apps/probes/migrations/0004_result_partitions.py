"""Probe results partitioned by day of ``created`` (PostgreSQL; nothing on SQLite).

The table becomes ``PARTITION BY RANGE (created)`` with a day partition for each day it holds
rows of and ``apps.lib.partitions.AHEAD_DAYS`` more, and a default partition. PostgreSQL wants
the partition key in the primary key: it is ``(id, created)`` in SQL, while Django still treats
``id`` as the primary key (ids come from the identity sequence, so they stay unique).

A populated table is copied in batches of ``BATCH`` rows by id, each its own transaction, then
the old one is dropped: it needs the table's size again on disk while it runs, and writers
should be stopped (run it before starting the workers). It ends with ``ANALYZE``. Reversing leaves the table partitioned
(the model is the same either way).
"""

from __future__ import annotations

from datetime import timedelta

from django.db import migrations, transaction
from django.utils import timezone

BATCH = 50_000
OLD = "probes_result_unpartitioned"
# The names Django gave the table's indexes and constraints (migrations 0001 and 0003).
INDEXES = {
    "probe_result_newest": "(created DESC, id DESC)",
    "probes_resu_target__a7aa06_idx": "(target_id, created DESC)",
    "probes_result_target_id_90bbc305": "(target_id)",
}
FOREIGN_KEY = "probes_result_target_id_90bbc305_fk_probes_target_id"


def partition(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    from apps.lib import partitions

    Result = apps.get_model("probes", "Result")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE probes_result RENAME TO {OLD}")
        cursor.execute(f"ALTER TABLE {OLD} RENAME CONSTRAINT probes_result_pkey TO {OLD}_pkey")
        cursor.execute(f"ALTER TABLE {OLD} DROP CONSTRAINT {FOREIGN_KEY}")
        for name in INDEXES:
            cursor.execute(f"ALTER INDEX {name} RENAME TO {name}_unpartitioned")
        cursor.execute(
            f"CREATE TABLE probes_result (LIKE {OLD} INCLUDING DEFAULTS INCLUDING CONSTRAINTS "
            "INCLUDING IDENTITY) PARTITION BY RANGE (created)"
        )
        cursor.execute(
            "ALTER TABLE probes_result ADD CONSTRAINT probes_result_pkey PRIMARY KEY (id, created)"
        )
        for name, columns in INDEXES.items():
            cursor.execute(f"CREATE INDEX {name} ON probes_result {columns}")
        cursor.execute(
            f"ALTER TABLE probes_result ADD CONSTRAINT {FOREIGN_KEY} FOREIGN KEY (target_id) "
            "REFERENCES probes_target (id) DEFERRABLE INITIALLY DEFERRED"
        )
        cursor.execute("CREATE TABLE probes_result_default PARTITION OF probes_result DEFAULT")
        cursor.execute(f"SELECT min(created), max(id) FROM {OLD}")
        oldest, last = cursor.fetchone()
    now = timezone.now()
    first = oldest.date() if oldest is not None else now.date()
    partitions.ensure(Result, first, now.date() + timedelta(days=partitions.AHEAD_DAYS))
    done = 0
    while last is not None and done < last:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO probes_result SELECT * FROM {OLD} WHERE id > %s AND id <= %s",
                [done, done + BATCH],
            )
        done += BATCH
    with transaction.atomic(), connection.cursor() as cursor:
        if last is not None:
            cursor.execute(
                "SELECT setval(pg_get_serial_sequence('probes_result', 'id'), %s)", [last]
            )
        cursor.execute(f"DROP TABLE {OLD}")
    with connection.cursor() as cursor:
        # The copied partitions have no statistics yet: without them one target's results read
        # 150 ms instead of 20 (autovacuum would analyze them, later).
        cursor.execute("ANALYZE probes_result")


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("probes", "0003_keyset_indexes"),
    ]

    operations = [
        migrations.RunPython(partition, migrations.RunPython.noop),
    ]

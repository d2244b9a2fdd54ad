"""Probe results partitioned by day of ``created`` (PostgreSQL; nothing on SQLite).

``apps.lib.partitions.partition_by_day``: the table becomes ``PARTITION BY RANGE (created)``
with a day partition for each day it holds rows of and ``AHEAD_DAYS`` more, and a default
partition; its primary key is ``(id, created)`` in SQL, while Django still treats ``id`` as the
primary key. A populated table is copied in batches of 50,000 rows by id, each its own
transaction, then the old one is dropped (the table's size again on disk while it runs; run it
before starting the workers), and analyzed.
"""

from __future__ import annotations

from django.db import migrations

from apps.lib import partitions


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("probes", "0003_keyset_indexes")]
    operations = [partitions.by_day("probes", "Result", "created")]

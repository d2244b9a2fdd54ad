"""EFS minute rows partitioned by day of ``ts`` (PostgreSQL; nothing on SQLite), as probe
results are (``probes.0004``).

The primary key is ``(id, ts)`` in SQL, while Django still treats ``id`` as the primary key;
the collector's upsert, ``ON CONFLICT (filesystem_id, ts)``, names a unique constraint that
holds the partition key already. A populated table is copied in batches of 50,000 rows by id
(about 10 million rows with 1,000 file systems and 7 days of minutes), then the old one is
dropped (the table's size again on disk while it runs; run it before starting the workers).
"""

from __future__ import annotations

from django.db import migrations

from apps.lib import partitions


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("efs", "0005_filesystem_changed")]
    operations = [partitions.by_day("efs", "MetricMinute", "ts")]

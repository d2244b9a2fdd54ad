"""The file system's type (One Zone: its Availability Zone), its replication destinations,
and the metadata read/write split of the minute and hour rows (issue 24).

On SQLite, adding a NOT NULL column makes Django rebuild the table, which drops its triggers:
the ``changed`` triggers of 0005 are made again after (PostgreSQL keeps them).
"""

import importlib

from django.db import migrations, models

CHANGED = importlib.import_module("apps.efs.migrations.0005_filesystem_changed")


def remake_sqlite_triggers(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    for statement in CHANGED.SQLITE_REVERSE:
        schema_editor.execute(statement.replace("DROP TRIGGER", "DROP TRIGGER IF EXISTS"))
    for statement in CHANGED.SQLITE:
        schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [
        ("efs", "0006_minute_partitions"),
    ]

    operations = [
        migrations.AddField(
            model_name="filesystem",
            name="availability_zone_name",
            field=models.CharField(
                blank=True,
                help_text="One Zone file systems only (DescribeFileSystems).",
                max_length=64,
            ),
        ),
        migrations.AddField(
            model_name="filesystem",
            name="replicas",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="Its replication destinations (DescribeReplicationConfigurations) and the latest TimeSinceLastSync of each: [{destination, region, status, last_replicated, sync_seconds, sync_at}].",
            ),
        ),
        migrations.AddField(
            model_name="metrichour",
            name="metadata_read_bytes",
            field=models.FloatField(null=True),
        ),
        migrations.AddField(
            model_name="metrichour",
            name="metadata_read_count",
            field=models.FloatField(null=True),
        ),
        migrations.AddField(
            model_name="metrichour",
            name="metadata_write_bytes",
            field=models.FloatField(null=True),
        ),
        migrations.AddField(
            model_name="metrichour",
            name="metadata_write_count",
            field=models.FloatField(null=True),
        ),
        migrations.AddField(
            model_name="metricminute",
            name="metadata_read_bytes",
            field=models.FloatField(null=True),
        ),
        migrations.AddField(
            model_name="metricminute",
            name="metadata_read_count",
            field=models.FloatField(null=True),
        ),
        migrations.AddField(
            model_name="metricminute",
            name="metadata_write_bytes",
            field=models.FloatField(null=True),
        ),
        migrations.AddField(
            model_name="metricminute",
            name="metadata_write_count",
            field=models.FloatField(null=True),
        ),
        migrations.RunPython(remake_sqlite_triggers, migrations.RunPython.noop),
    ]

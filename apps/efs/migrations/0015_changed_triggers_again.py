"""The ``changed`` triggers of 0005, made again on SQLite.

0012 (the per-file-system thresholds column) and 0013 (its removal) made Django rebuild the
table on SQLite, which drops its triggers: since then a write no longer moved ``changed``
there, so the API's kept file system list went on answering its old body (``make run`` runs
on SQLite). PostgreSQL keeps its triggers; ``tests/efs/test_api.py`` checks both stay.
"""

import importlib

from django.db import migrations

REMAKE = importlib.import_module("apps.efs.migrations.0007_aws_rules_2026").remake_sqlite_triggers


class Migration(migrations.Migration):
    dependencies = [
        ("efs", "0014_nfs_running_totals"),
    ]

    operations = [migrations.RunPython(REMAKE, migrations.RunPython.noop)]

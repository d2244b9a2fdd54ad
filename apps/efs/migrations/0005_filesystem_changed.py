"""``FileSystem.changed``: the time of the row's last write, kept by the database itself.

A trigger sets it on every insert and update, so an ``UPDATE`` from a queryset, a
compare-and-set in ``alerts.record()``, the admin or raw SQL all move it; a deletion touches
the oldest surviving row, so that it moves the newest ``changed`` too. The API's file system
list reads that newest value (one index lookup) as the validator of its cached body.
"""

from __future__ import annotations

import django.utils.timezone
from django.db import migrations, models

POSTGRESQL = (
    """
    CREATE FUNCTION efs_filesystem_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        NEW.changed := clock_timestamp();
        RETURN NEW;
    END $$
    """,
    """
    CREATE TRIGGER efs_filesystem_changed BEFORE INSERT OR UPDATE ON efs_filesystem
    FOR EACH ROW EXECUTE FUNCTION efs_filesystem_changed()
    """,
    """
    CREATE FUNCTION efs_filesystem_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE efs_filesystem SET changed = clock_timestamp()
        WHERE id = (SELECT min(id) FROM efs_filesystem);
        RETURN NULL;
    END $$
    """,
    """
    CREATE TRIGGER efs_filesystem_deleted AFTER DELETE ON efs_filesystem
    FOR EACH STATEMENT EXECUTE FUNCTION efs_filesystem_deleted()
    """,
)
POSTGRESQL_REVERSE = (
    "DROP TRIGGER efs_filesystem_deleted ON efs_filesystem",
    "DROP FUNCTION efs_filesystem_deleted()",
    "DROP TRIGGER efs_filesystem_changed ON efs_filesystem",
    "DROP FUNCTION efs_filesystem_changed()",
)
# SQLite has no BEFORE trigger that may change NEW: the row is written again after (recursive
# triggers are off, as Django leaves them, so this does not loop). Its
# clock has milliseconds: a write in the same one as the newest gets a millisecond more, so
# the newest ``changed`` moves with every write (SQLite writes one at a time).
SQLITE = (
    """
    CREATE TRIGGER efs_filesystem_changed AFTER UPDATE ON efs_filesystem
    FOR EACH ROW
    BEGIN
        UPDATE efs_filesystem SET changed = max(
            strftime('%Y-%m-%d %H:%M:%f', 'now'),
            strftime(
                '%Y-%m-%d %H:%M:%f',
                (SELECT max(changed) FROM efs_filesystem),
                '+0.001 seconds'
            )
        )
        WHERE id = NEW.id;
    END
    """,
    """
    CREATE TRIGGER efs_filesystem_deleted AFTER DELETE ON efs_filesystem
    FOR EACH ROW
    BEGIN
        UPDATE efs_filesystem SET changed = changed
        WHERE id = (SELECT min(id) FROM efs_filesystem);
    END
    """,
)
SQLITE_REVERSE = ("DROP TRIGGER efs_filesystem_deleted", "DROP TRIGGER efs_filesystem_changed")


def _run(statements: dict[str, tuple[str, ...]]):
    def run(apps, schema_editor):
        for statement in statements.get(schema_editor.connection.vendor, ()):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("efs", "0004_collection_dropped_values"),
    ]

    operations = [
        migrations.AddField(
            model_name="filesystem",
            name="changed",
            field=models.DateTimeField(
                db_index=True,
                default=django.utils.timezone.now,
                editable=False,
                help_text="Last write to the row: set by a database trigger on every insert and "
                "update, whatever wrote it (the API list's validator).",
            ),
        ),
        migrations.RunPython(
            _run({"postgresql": POSTGRESQL, "sqlite": SQLITE}),
            _run({"postgresql": POSTGRESQL_REVERSE, "sqlite": SQLITE_REVERSE}),
        ),
    ]

"""File systems' own thresholds move from their JSON column to ``regions.Threshold`` rows
(one mechanism for every concern: apps/regions/thresholds.py)."""

from django.db import migrations


def to_rows(apps, schema_editor):
    FileSystem = apps.get_model("efs", "FileSystem")
    Threshold = apps.get_model("regions", "Threshold")
    for fs in FileSystem.objects.exclude(thresholds={}).only("pk", "region_id", "thresholds"):
        if not isinstance(fs.thresholds, dict):
            continue
        for name, value in fs.thresholds.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                Threshold.objects.get_or_create(
                    region_id=fs.region_id,
                    concern="efs",
                    subject_id=fs.pk,
                    name=name,
                    defaults={"value": float(value)},
                )


def to_column(apps, schema_editor):
    FileSystem = apps.get_model("efs", "FileSystem")
    Threshold = apps.get_model("regions", "Threshold")
    own: dict[int, dict] = {}
    for t in Threshold.objects.filter(concern="efs", subject_id__isnull=False):
        own.setdefault(t.subject_id, {})[t.name] = t.value
    for pk, values in own.items():
        FileSystem.objects.filter(pk=pk).update(thresholds=values)


class Migration(migrations.Migration):
    dependencies = [
        ("efs", "0012_per_filesystem_thresholds"),
        ("regions", "0002_thresholds"),
    ]

    operations = [
        migrations.RunPython(to_rows, to_column),
        migrations.RemoveField(model_name="filesystem", name="thresholds"),
    ]

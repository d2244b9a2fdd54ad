from django.db import migrations


def create_default_rule(apps, schema_editor):
    Rule = apps.get_model("alerts", "Rule")
    Rule.objects.get_or_create(
        is_default=True,
        defaults={"name": "Default: everything warning or worse", "min_severity": "warning"},
    )


class Migration(migrations.Migration):
    dependencies = [("alerts", "0001_initial")]
    operations = [migrations.RunPython(create_default_rule, migrations.RunPython.noop)]

"""Operators may send a failed notification again (``alerts.resend_notification``); silences
that ended before this release count as released (what they held was never going to be sent)."""

from __future__ import annotations

from django.db import migrations
from django.db.models import F
from django.utils import timezone


def grant_and_mark(apps, schema_editor) -> None:
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    ContentType = apps.get_model("contenttypes", "ContentType")
    Silence = apps.get_model("alerts", "Silence")
    content_type, _ = ContentType.objects.get_or_create(app_label="alerts", model="notification")
    permission, _ = Permission.objects.get_or_create(
        content_type=content_type,
        codename="resend_notification",
        defaults={"name": "Can send a notification again"},
    )
    operators, _ = Group.objects.get_or_create(name="Operator")
    operators.permissions.add(permission)
    Silence.objects.filter(released=None, ends__lte=timezone.now()).update(released=F("ends"))


class Migration(migrations.Migration):
    dependencies = [
        ("alerts", "0005_channel_kinds_silence_release_per_recipient"),
        ("accounts", "0002_roles"),
    ]

    operations = [migrations.RunPython(grant_and_mark, migrations.RunPython.noop)]

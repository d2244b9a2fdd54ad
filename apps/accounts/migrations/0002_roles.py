"""The three roles as groups: Viewer (no permission: reading needs none), Operator, Admin.

The Admin group holds no permission rows: ``apps.accounts.backends.RoleBackend`` gives its
members every permission, those of later models included. Permissions are created here if
``post_migrate`` has not made them yet (a fresh database), so the Operator group gets them.
Idempotent (``get_or_create``): other apps' migrations may add to these groups the same way.
"""

from __future__ import annotations

from django.db import migrations

GROUPS = ("Viewer", "Operator", "Admin")
OPERATOR_PERMISSIONS = (
    ("alerts", "incident", "acknowledge_incident", "Can acknowledge an incident"),
    ("alerts", "silence", "add_silence", "Can add silence"),
    ("alerts", "silence", "change_silence", "Can change silence"),
    ("alerts", "silence", "delete_silence", "Can delete silence"),
    ("probes", "target", "add_target", "Can add target"),
    ("probes", "target", "change_target", "Can change target"),
    ("probes", "target", "delete_target", "Can delete target"),
)


def create_roles(apps, schema_editor) -> None:
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    ContentType = apps.get_model("contenttypes", "ContentType")
    groups = {name: Group.objects.get_or_create(name=name)[0] for name in GROUPS}
    for app_label, model, codename, name in OPERATOR_PERMISSIONS:
        content_type, _ = ContentType.objects.get_or_create(app_label=app_label, model=model)
        permission, _ = Permission.objects.get_or_create(
            content_type=content_type, codename=codename, defaults={"name": name}
        )
        groups["Operator"].permissions.add(permission)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("alerts", "0004_incident_acknowledge_permission"),
        ("probes", "0001_initial"),
    ]

    operations = [migrations.RunPython(create_roles, migrations.RunPython.noop)]

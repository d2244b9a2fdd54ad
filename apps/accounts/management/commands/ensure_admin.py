"""Create the first admin user when there is none; print its login once."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand

from apps.accounts.roles import ADMIN_GROUP
from apps.accounts.signals import first_admin_created
from apps.lib.conf import BY_NAME


class Command(BaseCommand):
    help = "Create a first superuser if none exists (password from VIGIL_ADMIN_PASSWORD or random)."

    def handle(self, *args: object, **options: object) -> None:
        User = get_user_model()
        if User.objects.filter(is_superuser=True).exists():
            return
        # Read now, not with the settings (apps/lib/conf.py declares them).
        username = BY_NAME["VIGIL_ADMIN_USERNAME"].read()
        email = BY_NAME["VIGIL_ADMIN_EMAIL"].read()
        password = BY_NAME["VIGIL_ADMIN_PASSWORD"].read()
        generated = not password
        if generated:
            password = secrets.token_urlsafe(12)
        admin = User.objects.create_superuser(username=username, email=email, password=password)
        # A superuser holds every permission anyway; the group shows the role in the admin.
        admin.groups.add(Group.objects.get_or_create(name=ADMIN_GROUP)[0])
        first_admin_created.send(sender=self.__class__, user=admin, email=email)
        shown = password if generated else "(from VIGIL_ADMIN_PASSWORD)"
        self.stdout.write(
            self.style.SUCCESS(
                f"Created the first admin user for {settings.VIGIL_BASE_URL}/\n"
                f"    username: {username}\n    password: {shown}\n"
                "This password is shown once; change it under /admin/ or set VIGIL_ADMIN_PASSWORD."
            )
        )

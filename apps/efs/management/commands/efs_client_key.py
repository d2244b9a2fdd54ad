"""``manage.py efs_client_key NAME``: issue (or replace) a fleet's key for agents/vigil-nfs-push
and print it once; Vigil keeps only its digest."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from apps.efs.models import ClientKey


class Command(BaseCommand):
    help = "Issue (or replace) the push key NFS clients of a fleet send (vgc_…); printed once."

    def add_arguments(self, parser) -> None:
        parser.add_argument("name", help="The fleet's name, e.g. web-eu-west-1")

    def handle(self, *args, name: str, **options) -> None:
        key, _ = ClientKey.objects.get_or_create(name=name[:100])
        self.stdout.write(key.issue_token())

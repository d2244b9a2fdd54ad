"""Print (or ``--write``) docs/configuration.md, generated from the settings declarations."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from apps.lib import appconf


class Command(BaseCommand):
    help = (
        "The configuration reference (docs/configuration.md): every declared environment "
        "variable with its type, default and meaning, from apps/lib/conf.py and each app's conf.py."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--write", action="store_true", help=f"write {appconf.REFERENCE_FILE}")

    def handle(self, *args: object, **options: object) -> None:
        text = appconf.reference(appconf.vigils(settings.INSTALLED_APPS))
        if options["write"]:
            (appconf.ROOT / appconf.REFERENCE_FILE).write_text(text)
            self.stdout.write(f"wrote {appconf.REFERENCE_FILE}")
        else:
            self.stdout.write(text, ending="")

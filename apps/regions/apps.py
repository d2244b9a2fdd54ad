from __future__ import annotations

from django.apps import AppConfig


class RegionsConfig(AppConfig):
    name = "apps.regions"
    label = "regions"
    verbose_name = "Accounts and regions"

    def ready(self) -> None:
        # Imported in ready(): app modules and models load once the app registry is ready.
        from django.core import checks

        from . import concerns

        checks.register(concerns.check)

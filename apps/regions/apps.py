from __future__ import annotations

from django.apps import AppConfig


class RegionsConfig(AppConfig):
    name = "apps.regions"
    label = "regions"
    verbose_name = "Accounts and regions"

    def ready(self) -> None:
        from django.core import checks

        from . import concerns

        checks.register(concerns.check)

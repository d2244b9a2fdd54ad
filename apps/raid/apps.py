from __future__ import annotations

from django.apps import AppConfig


class RaidConfig(AppConfig):
    name = "apps.raid"
    label = "raid"
    verbose_name = "md-RAID"

    def ready(self) -> None:
        from apps.regions import concerns

        from .models import Array

        concerns.register_app(
            self,
            "md-RAID",
            subjects=lambda: Array.objects.filter(present=True),
            add_links=(concerns.AddLink("Add an md-RAID host", "raid:add", "raid.add_host"),),
        )

from __future__ import annotations

from django.apps import AppConfig


class RaidConfig(AppConfig):
    name = "apps.raid"
    label = "raid"
    verbose_name = "md-RAID"

    def ready(self) -> None:
        from apps.regions import concerns

        from . import demo, prometheus, tasks, views
        from .models import Array

        concerns.register(
            self,
            concerns.Concern(
                "raid",
                "md-RAID",
                subjects=lambda: Array.objects.filter(present=True),
                dispatch=tasks.dispatch_due,
                region_template="raid/region_panel.html",
                region_context=views.region_panel_context,
                prometheus=prometheus.metrics,
                add_links=(concerns.AddLink("Add an md-RAID host", "raid:add", "raid.add_host"),),
                demo_setup=demo.set_up,
            ),
        )

from __future__ import annotations

from django.apps import AppConfig


class GaleraConfig(AppConfig):
    name = "apps.galera"
    label = "galera"
    verbose_name = "Galera clusters"

    def ready(self) -> None:
        from apps.regions import concerns

        from . import demo, prometheus, tasks, views
        from .models import Cluster

        concerns.register(
            concerns.Concern(
                "galera",
                "Galera",
                subjects=lambda: Cluster.objects.filter(enabled=True),
                dispatch=tasks.dispatch_due,
                region_template="galera/region_panel.html",
                region_context=views.region_panel_context,
                prometheus=prometheus.metrics,
                demo_setup=demo.set_up,
            )
        )

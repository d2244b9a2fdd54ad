from __future__ import annotations

from django.apps import AppConfig


class ProbesConfig(AppConfig):
    name = "apps.probes"
    label = "probes"
    verbose_name = "HTTP keep-alive probes"

    def ready(self) -> None:
        from apps.regions import concerns

        from . import demo, prometheus, tasks, views
        from .models import Target

        concerns.register(
            self,
            concerns.Concern(
                "probes",
                "Keep-alive",
                subjects=lambda: Target.objects.filter(enabled=True),
                dispatch=tasks.dispatch_due,
                region_template="probes/region_panel.html",
                region_context=views.region_panel_context,
                prometheus=prometheus.metrics,
                add_links=(
                    concerns.AddLink("Add a keep-alive probe", "probes:add", "probes.add_target"),
                ),
                demo_setup=demo.set_up,
                demo_runtime=demo.running_servers,
            ),
        )

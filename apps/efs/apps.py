from __future__ import annotations

from django.apps import AppConfig


class EfsConfig(AppConfig):
    name = "apps.efs"
    label = "efs"
    verbose_name = "EFS"

    def ready(self) -> None:
        from apps.demo import standin as demo_standin
        from apps.regions import concerns

        from . import demo, prometheus, standin, tasks, views
        from .models import FileSystem, RegionCollection

        concerns.register(
            self,
            concerns.Concern(
                "efs",
                "EFS",
                subjects=lambda: FileSystem.objects.filter(deleted__isnull=True),
                dispatch=tasks.dispatch_due,
                region_template="efs/region_panel.html",
                region_context=views.region_panel_context,
                prometheus=prometheus.metrics,
                demo_setup=demo.set_up,
                region_errors=lambda ids: dict(
                    RegionCollection.objects.filter(region_id__in=ids)
                    .exclude(last_error="")
                    .values_list("region_id", "last_error")
                ),
            ),
        )
        if standin.install not in demo_standin.START_HOOKS:
            demo_standin.START_HOOKS.append(standin.install)

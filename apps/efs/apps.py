from __future__ import annotations

from django.apps import AppConfig


class EfsConfig(AppConfig):
    name = "apps.efs"
    label = "efs"
    verbose_name = "EFS"

    def ready(self) -> None:
        from apps.demo import standin as demo_standin
        from apps.regions import concerns

        from . import standin
        from .models import FileSystem, RegionCollection

        concerns.register_app(
            self,
            "EFS",
            subjects=lambda: FileSystem.objects.filter(deleted__isnull=True),
            region_errors=lambda ids: dict(
                RegionCollection.objects.filter(region_id__in=ids)
                .exclude(last_error="")
                .values_list("region_id", "last_error")
            ),
        )
        if standin.install not in demo_standin.START_HOOKS:
            demo_standin.START_HOOKS.append(standin.install)

from __future__ import annotations

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ProbesConfig(AppConfig):
    name = "apps.probes"
    label = "probes"
    verbose_name = "HTTP keep-alive probes"

    def ready(self) -> None:
        # Imported in ready(): app modules and models load once the app registry is ready.
        from apps.lib import partitions
        from apps.lib.thresholds import ThresholdSet
        from apps.regions import concerns

        # After every migrate: the probe results' day partitions for the days ahead.
        post_migrate.connect(partitions.ahead_after_migrate, sender=self)

        # Imported in ready(): app modules and models load once the app registry is ready.
        from . import demo, models, verdict
        from .models import Target

        concerns.register_app(
            self,
            "Keep-alive",
            subjects=lambda: Target.objects.filter(enabled=True),
            add_links=(
                concerns.AddLink(
                    "Add a keep-alive probe", "probes:target_add", "probes.add_target"
                ),
            ),
            demo_runtime=demo.running_servers,
            thresholds=ThresholdSet(verdict.SPECS, models.thresholds, "target"),
        )

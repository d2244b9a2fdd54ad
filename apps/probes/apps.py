from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _partitions_ahead(**kwargs: Any) -> None:
    """After every ``migrate``: the probe results' day partitions for the days ahead."""
    from django.utils import timezone

    from apps.lib import partitions

    from .models import Result

    partitions.ensure_ahead(Result, timezone.now())


class ProbesConfig(AppConfig):
    name = "apps.probes"
    label = "probes"
    verbose_name = "HTTP keep-alive probes"

    def ready(self) -> None:
        from apps.regions import concerns

        post_migrate.connect(_partitions_ahead, sender=self)

        from . import demo
        from .models import Target

        concerns.register_app(
            self,
            "Keep-alive",
            subjects=lambda: Target.objects.filter(enabled=True),
            add_links=(
                concerns.AddLink("Add a keep-alive probe", "probes:add", "probes.add_target"),
            ),
            demo_runtime=demo.running_servers,
        )

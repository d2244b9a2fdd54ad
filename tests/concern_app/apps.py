from __future__ import annotations

from django.apps import AppConfig


class ConcernAppConfig(AppConfig):
    name = "tests.concern_app"
    label = "concern_app"

    def ready(self) -> None:
        from apps.regions import concerns

        from .models import Gadget

        concerns.register(
            concerns.Concern(
                "gadgets",
                "Gadgets",
                subjects=lambda: Gadget.objects.all(),
                region_template="concern_app/region_panel.html",
                region_context=lambda region: {"gadgets": Gadget.objects.filter(region=region)},
            )
        )

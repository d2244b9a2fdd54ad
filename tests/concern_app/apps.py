"""A minimal concern used only by the tests, in the shape of a real one and registered the same
way: ``config/settings/test.py`` installs it (``INSTALLED_APPS``) and nothing else in ``config/``
names it; its queue, pages, API routes and settings are picked up from the concern registry."""

from __future__ import annotations

from django.apps import AppConfig


class GadgetsConfig(AppConfig):
    name = "tests.concern_app"
    label = "gadgets"

    def ready(self) -> None:
        from apps.regions import concerns

        from . import demo, prometheus, tasks, views
        from .models import Gadget

        concerns.register(
            self,
            concerns.Concern(
                "gadgets",
                "Gadgets",
                subjects=lambda: Gadget.objects.all(),
                dispatch=tasks.dispatch_due,
                region_template="concern_app/region_panel.html",
                region_context=views.region_panel_context,
                prometheus=prometheus.metrics,
                demo_setup=demo.set_up,
            ),
        )

from __future__ import annotations

from django.apps import AppConfig


class GaleraConfig(AppConfig):
    name = "apps.galera"
    label = "galera"
    verbose_name = "Galera clusters"

    def ready(self) -> None:
        from django.core import checks

        from apps.regions import concerns

        from . import demo, prometheus, tasks, views
        from .models import Cluster

        concerns.register(
            self,
            concerns.Concern(
                "galera",
                "Galera",
                subjects=lambda: Cluster.objects.filter(enabled=True),
                dispatch=tasks.dispatch_due,
                region_template="galera/region_panel.html",
                region_context=views.region_panel_context,
                prometheus=prometheus.metrics,
                add_links=(
                    concerns.AddLink("Add a Galera cluster", "galera:add", "galera.add_cluster"),
                ),
                demo_setup=demo.set_up,
            ),
        )
        checks.register(secrets_dir_check, checks.Tags.security)


def secrets_dir_check(**kwargs: object) -> list:
    """``manage.py check`` (and migrate, runserver) name a shared password directory."""
    from django.core import checks

    from .models import secrets_dir_problem

    problem = secrets_dir_problem()
    return [checks.Error(problem, id="galera.E001")] if problem else []

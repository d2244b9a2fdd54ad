from __future__ import annotations

from django.apps import AppConfig


class GaleraConfig(AppConfig):
    name = "apps.galera"
    label = "galera"
    verbose_name = "Galera clusters"

    def ready(self) -> None:
        # Imported in ready(): app modules and models load once the app registry is ready.
        from django.core import checks

        from apps.lib.thresholds import ThresholdSet
        from apps.regions import concerns

        from . import collect, replication
        from .models import Cluster

        concerns.register_app(
            self,
            "Galera",
            subjects=lambda: Cluster.objects.filter(enabled=True),
            thresholds=ThresholdSet(replication.SPECS, collect.thresholds, "cluster"),
            add_links=(
                concerns.AddLink(
                    "Add a Galera cluster", "galera:cluster_add", "galera.add_cluster"
                ),
            ),
        )
        checks.register(secrets_dir_check, checks.Tags.security)


def secrets_dir_check(**kwargs: object) -> list:
    """``manage.py check`` (and migrate, runserver) name a shared password directory."""
    # Imported in ready(): app modules and models load once the app registry is ready.
    from django.core import checks

    from .models import secrets_dir_problem

    problem = secrets_dir_problem()
    return [checks.Error(problem, id="galera.E001")] if problem else []

from __future__ import annotations

from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "apps.alerts"
    label = "alerts"
    verbose_name = "Alerts"

    def ready(self) -> None:
        # Imported in ready(): app modules and models load once the app registry is ready.
        from django.db.models.signals import post_migrate, post_save, pre_save

        from apps.accounts.signals import first_admin_created
        from apps.regions import models as region_models
        from apps.regions.models import Region

        from . import models
        from .integrations import TRANSPORTS
        from .models import Silence
        from .receivers import (
            ensure_default_rule,
            region_saved,
            remember_enabled,
            route_to_first_admin,
            silence_saved,
        )

        pre_save.connect(remember_enabled, sender=Region, dispatch_uid="vigil-alerts-region-was")
        post_save.connect(region_saved, sender=Region, dispatch_uid="vigil-alerts-region-on")
        post_save.connect(silence_saved, sender=Silence, dispatch_uid="vigil-alerts-silence-wake")
        post_migrate.connect(ensure_default_rule, sender=self, dispatch_uid="vigil-default-rule")
        first_admin_created.connect(route_to_first_admin, dispatch_uid="vigil-first-admin-routed")
        # What regions hold and draw, what each channel kind accepts: asked through registries, as
        # regions and the models sit below the alerts and its transports.
        region_models.HELD_ELSEWHERE["alerts"] = models.held_in_regions
        region_models.TIMELINE_SOURCES.update(
            changes=models.changes_in_region, windows=models.MaintenanceWindow.in_region
        )
        models.CHANNEL_KINDS.update({kind: t.validate for kind, t in TRANSPORTS.items()})

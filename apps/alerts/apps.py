from __future__ import annotations

from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "apps.alerts"
    label = "alerts"
    verbose_name = "Alerts"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate, post_save, pre_save

        from apps.regions.models import Region

        from .models import Silence
        from .receivers import ensure_default_rule, region_saved, remember_enabled, silence_saved

        pre_save.connect(remember_enabled, sender=Region, dispatch_uid="vigil-alerts-region-was")
        post_save.connect(region_saved, sender=Region, dispatch_uid="vigil-alerts-region-on")
        post_save.connect(silence_saved, sender=Silence, dispatch_uid="vigil-alerts-silence-wake")
        post_migrate.connect(ensure_default_rule, sender=self, dispatch_uid="vigil-default-rule")

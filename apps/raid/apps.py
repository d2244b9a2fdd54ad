from __future__ import annotations

from django.apps import AppConfig


class RaidConfig(AppConfig):
    name = "apps.raid"
    label = "raid"
    verbose_name = "md-RAID"

    def ready(self) -> None:
        # Imported in ready(): app modules and models load once the app registry is ready.
        from django.db.models import Q

        from apps.lib.retention import History
        from apps.lib.thresholds import ThresholdSet
        from apps.regions import concerns

        from . import collect, demo, thresholds
        from .models import Array

        concerns.register_app(
            self,
            "md-RAID",
            subjects=lambda: Array.objects.filter(present=True),
            add_links=(concerns.AddLink("Add an md-RAID host", "raid:host_add", "raid.add_host"),),
            thresholds=ThresholdSet(thresholds.SPECS, collect.array_thresholds, "array"),
            demo_runtime=demo.running_reports,
            # Gone arrays and their members, by when they were last seen, and gone disks with
            # their readings, by when they went, after one setting; present ones stay.
            history=(
                History(
                    "raid.Array",
                    "last_seen",
                    "VIGIL_RAID_GONE_ARRAY_RETENTION_DAYS",
                    keep=lambda: Q(present=True),
                    closes_incidents=True,
                ),
                History(
                    "raid.Disk",
                    "gone_since",
                    "VIGIL_RAID_GONE_ARRAY_RETENTION_DAYS",
                    keep=lambda: Q(present=True),
                ),
            ),
        )

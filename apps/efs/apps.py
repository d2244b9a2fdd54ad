from __future__ import annotations

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class EfsConfig(AppConfig):
    name = "apps.efs"
    label = "efs"
    verbose_name = "EFS"

    def ready(self) -> None:
        # Imported in ready(): app modules and models load once the app registry is ready.
        from apps.lib import partitions, versions
        from apps.lib.retention import History
        from apps.lib.thresholds import ThresholdSet
        from apps.regions import concerns

        # After every migrate: the minute rows' day partitions for the days ahead.
        post_migrate.connect(partitions.ahead_after_migrate, sender=self)

        # Imported in ready(): app modules and models load once the app registry is ready.
        from . import collect, demo_clients, demo_cloudwatch, elasticfilesystem, verdict
        from .models import FileSystem, RegionCollection

        # The API's file system list follows this version (apps/api/conditional.py).
        versions.watch(FileSystem._meta.db_table)

        concerns.register_app(
            self,
            "EFS",
            subjects=lambda: FileSystem.objects.filter(deleted__isnull=True),
            demo_runtime=demo_clients.running_clients,
            demo_aws=demo_cloudwatch.install,
            thresholds=ThresholdSet(verdict.SPECS, collect.thresholds, "file system"),
            aws_actions=(
                (
                    "elasticfilesystem:DescribeMountTargets",
                    "apps/efs/elasticfilesystem.py: mount targets' addresses, to tie NFS clients "
                    "that mount by address (optional)",
                ),
            ),
            history=(
                History("efs.NfsSample", "time", "VIGIL_EFS_CLIENT_RETENTION_DAYS"),
                History("efs.NfsHour", "hour", "VIGIL_EFS_CLIENT_HOUR_RETENTION_DAYS"),
            ),
            region_errors=lambda ids: dict(
                RegionCollection.objects.filter(region_id__in=ids)
                .exclude(last_error="")
                .values_list("region_id", "last_error")
            ),
            seen_in_region=lambda code, access: [
                fs.name or fs.id for fs in elasticfilesystem.describe_file_systems(code, access)
            ],
        )

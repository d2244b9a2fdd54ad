from __future__ import annotations

from django.apps import AppConfig


class EbsConfig(AppConfig):
    name = "apps.ebs"
    label = "ebs"
    verbose_name = "EBS"

    def ready(self) -> None:
        # Imported in ready(): app modules and models load once the app registry is ready.
        from apps.lib.retention import History
        from apps.regions import concerns

        from . import demo_cloudwatch, hosts
        from .models import RegionCollection, Volume

        concerns.register_app(
            self,
            "EBS",
            subjects=lambda: Volume.objects.filter(deleted__isnull=True),
            region_errors=lambda ids: dict(
                RegionCollection.objects.filter(region_id__in=ids)
                .exclude(last_error="")
                .values_list("region_id", "last_error")
            ),
            history=(
                History("ebs.VolumeMinute", "ts", "VIGIL_EBS_MINUTE_RETENTION_DAYS"),
                History("ebs.InstanceMinute", "ts", "VIGIL_EBS_MINUTE_RETENTION_DAYS"),
            ),
            aws_actions=(
                ("ec2:DescribeVolumes", "apps/ebs/ec2.py: the volumes"),
                ("ec2:DescribeInstances", "apps/ebs/ec2.py: the instances they are attached to"),
                ("cloudwatch:GetMetricData", "apps/ebs/cloudwatch.py: the EBS metrics"),
            ),
            aside_template="ebs/aside.html",
            aside_context=hosts.aside,
            notes=hosts.notes,
            demo_aws=demo_cloudwatch.install,
        )

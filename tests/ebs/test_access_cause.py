"""An AWS account-region whose calls fail: its EFS file systems and EBS volumes that go unknown
with it share one incident by cause, across the two concerns."""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps.alerts.models import Cause
from apps.ebs import collect as ebs_collect
from apps.ebs.models import Instance, Volume
from apps.ebs.models import RegionCollection as EbsCollection
from apps.efs import collect as efs_collect
from apps.efs.models import FileSystem
from apps.efs.models import RegionCollection as EfsCollection
from apps.regions.models import Account, Region

pytestmark = pytest.mark.django_db


def test_file_systems_and_volumes_of_a_refused_region_share_one_incident():
    account = Account.objects.create(name="prod")
    region = Region.objects.create(account=account, code="eu-west-1", opt_in_status="opted-in")
    FileSystem.objects.create(region=region, filesystem_id="fs-1", status="ok")
    instance = Instance.objects.create(region=region, instance_id="i-1", state="running")
    Volume.objects.create(
        region=region, volume_id="vol-1", volume_type="gp3", status="ok", instance=instance
    )
    error = "AccessDenied: not authorized to perform cloudwatch:GetMetricData"
    efs = EfsCollection.objects.create(region=region, last_error=error)
    ebs = EbsCollection.objects.create(region=region, last_error=error)
    now = timezone.now()
    efs_collect.judge_region(efs, now)
    ebs_collect.judge_region(ebs, now)
    (cause,) = Cause.objects.all()
    assert cause.label == "AWS access to eu-west-1 (prod)"
    assert sorted(i.concern for i in cause.incidents.all()) == ["ebs", "efs"]

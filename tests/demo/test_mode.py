"""Where the demo puts its subjects: one AWS region with the full picture, one site outside."""

from __future__ import annotations

import pytest

from apps.demo import mode
from apps.demo.standin import AwsStandIn
from apps.galera.models import Cluster
from apps.lib import aws
from apps.probes.models import Target
from apps.raid.models import Array, Host
from apps.regions import demo, tasks
from apps.regions.models import Account, Region

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def test_the_demo_region_holds_galera_raid_and_probes_beside_efs_and_one_site_is_outside_aws(
    settings,
):
    settings.VIGIL_DEMO = "true"
    # An earlier version's per-concern site, with its host: moved, then the site removed.
    former = demo.demo_site("demo-storage", "Demo site: iSCSI storage (md-RAID)")
    with AwsStandIn() as url:
        settings.AWS_ENDPOINT_URL = url
        aws.clear_cache()
        demo.ensure_demo_account(True)
        tasks.discover_regions(Account.objects.get(is_demo=True).pk)
        Host.objects.create(name="demo-storage-client", region=former, is_demo=True)
        mode.set_up_demo_fleet()
        mode.set_up_demo_fleet()  # idempotent
    aws.clear_cache()

    region = Region.objects.get(account__is_demo=True, code=demo.DEMO_REGION)
    assert region.kind == Region.Kind.AWS
    assert Cluster.objects.filter(region=region, is_demo=True).count() == 1
    assert Host.objects.get(is_demo=True).region == region
    assert Array.objects.filter(region=region).count() == 6  # md1..md5 and md99
    assert Target.objects.filter(region=region).count() == 3

    site = Region.objects.get(account__is_demo=True, kind=Region.Kind.SITE)
    assert site.code == demo.OUTSIDE_SITE_CODE and "outside AWS" in site.name
    assert Cluster.objects.filter(region=site).count() == 1
    assert Target.objects.filter(region=site).count() == 1
    assert not Region.objects.filter(code="demo-storage").exists()

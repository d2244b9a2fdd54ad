"""Storing the throughput-mode comparison (apps/efs/pricing.py): spread over the cycles."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.efs import pricing
from apps.efs.models import FileSystem, RegionCollection
from apps.regions.models import Account, Region

pytestmark = pytest.mark.django_db


def test_it_prices_the_stalest_file_systems_a_share_per_cycle():
    region = Region.objects.create(account=Account.objects.create(name="a"), code="us-east-1")
    rc = RegionCollection.objects.create(region=region)
    now = timezone.now()
    old = (now - pricing.REFRESH - timedelta(minutes=1)).isoformat()
    fresh = (now - timedelta(hours=1)).isoformat()
    for i in range(30):
        FileSystem.objects.create(region=region, filesystem_id=f"fs-{i:08x}")
    FileSystem.objects.filter(filesystem_id="fs-00000001").update(figures={"costs_at": old})
    FileSystem.objects.filter(filesystem_id="fs-00000002").update(figures={"costs_at": fresh})
    cycle = timedelta(minutes=5)

    # 30 of them over half of REFRESH would be 1 a cycle; at least 20 are priced.
    assert pricing.price_region(rc, now, spread=cycle) == 20
    assert pricing.price_region(rc, now, spread=cycle) == 9  # the last stale one, fs-...01
    assert pricing.price_region(rc, now, spread=cycle) == 0
    priced = FileSystem.objects.get(filesystem_id="fs-00000001").figures
    assert priced["costs_at"] == now.isoformat()
    assert priced["cost_best_mode"] is None  # no data: no comparison, never zeros
    assert pricing.price_region(rc, now, force=True) == 30

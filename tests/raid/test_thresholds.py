"""md-RAID thresholds per array and per region: a disk-health threshold set for one array
changes that array's status only, one set for the region applies to its arrays unless one sets
its own, and the reason says which threshold applied (the seed host, its reports ingested)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.lib.status import Status
from apps.raid.collect import ingest
from apps.raid.demo import seed_layout_mdstat, seed_smart
from apps.raid.models import Array
from apps.regions import thresholds
from tests.raid.test_disk_store import DISKS

pytestmark = pytest.mark.django_db


def report(host, minutes: int = 0) -> dict[str, str]:
    """The seed layout with sdd (in md3, under md99) at 24 pending sectors; each array's status
    and reason after it."""
    smart = {disk: seed_smart(disk, failing="sdd") for disk in DISKS}
    ingest(host, seed_layout_mdstat(), smart=smart, now=timezone.now() + timedelta(minutes=minutes))
    return {a.name: (a.status, a.reason) for a in Array.objects.filter(host=host)}


def md(host, name: str) -> int:
    return Array.objects.get(host=host, name=name).pk


def test_a_per_array_threshold_changes_that_array_and_no_other(host):
    before = report(host)
    assert before["md3"][0] == Status.WARNING.value
    assert "(at least" not in before["md3"][1]
    thresholds.replace("raid", host.region, md(host, "md3"), {"pending_sectors": 100})
    after = report(host, 1)
    assert after["md3"][0] == Status.OK.value
    assert {n: s for n, (s, _) in after.items() if n != "md3"} == {
        n: s for n, (s, _) in before.items() if n != "md3"
    }
    thresholds.replace("raid", host.region, md(host, "md3"), {"pending_sectors": 20})
    status, reason = report(host, 2)["md3"]
    assert status == Status.WARNING.value
    assert "pending sectors 24 (at least 20: this array's threshold; default 1 sectors)" in reason


def test_a_region_threshold_applies_unless_the_array_sets_its_own(host):
    assert report(host)["md99"][0] != Status.OK.value
    thresholds.replace("raid", host.region, None, {"pending_sectors": 100})
    thresholds.replace("raid", host.region, md(host, "md3"), {"pending_sectors": 20})
    after = report(host, 1)
    assert after["md99"][0] == Status.OK.value  # the region's 100 applies to it
    assert after["md3"][0] == Status.WARNING.value  # its own 20 wins over the region's
    assert "this array's threshold" in after["md3"][1]


def test_admins_set_them_through_the_api_and_the_host_page(host, admin_client):
    report(host)
    url = f"/api/raid/arrays/{md(host, 'md1')}/thresholds/"
    shown = admin_client.get(url).json()
    assert shown["defaults"]["pending_sectors"] == 1 and shown["defaults"]["check_max_days"] == 40
    bad = admin_client.put(url, {"pending_sectors": 1.5}, content_type="application/json")
    assert bad.status_code == 400
    put = admin_client.put(url, {"check_max_days": 7}, content_type="application/json")
    assert put.status_code == 200 and put.json()["own"] == {"check_max_days": 7.0}
    page = admin_client.get(f"/raid/hosts/{host.pk}/").content.decode()
    assert "Disk failing at pending sectors" in page and "Save the thresholds" in page

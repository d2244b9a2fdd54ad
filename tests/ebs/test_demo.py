"""Demo mode: the md-RAID lab's storage servers and a Galera node's instance are created in the
stand-in, collected, judged and shown beside the RAID host and the Galera cluster."""

from __future__ import annotations

import pytest
from django.urls import reverse

from apps.ebs import demo, tasks
from apps.ebs.models import RegionCollection, Volume
from apps.galera import demo as galera_demo
from apps.raid import demo as raid_demo
from apps.regions.demo import DEMO_REGION
from tests.helpers import demo_account_on_standin

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


@pytest.fixture
def lab(settings):
    with demo_account_on_standin(settings) as account:
        raid_host = raid_demo.set_up()
        (cluster, _) = galera_demo.set_up()
        assert demo.set_up() == 16  # fifteen storage volumes and the Galera node's
        assert demo.set_up() == 0  # idempotent
        region = account.regions.get(code=DEMO_REGION)
        rc, _ = RegionCollection.objects.get_or_create(region=region)
        result = tasks.collect_region(rc.pk, region=region.code)
    return raid_host, cluster, result


def test_the_lab_volumes_are_collected_at_the_floor_and_storage_b_drains_first(
    lab, logged_in_client
):
    raid_host, cluster, result = lab
    assert result["api_calls"] == result["floor_calls"] == 1
    storage = Volume.objects.filter(name__contains="-lun")
    assert storage.count() == 15 and {v.volume_type for v in storage} == {"gp2"}
    assert {v.size_gib for v in storage} == {50}
    draining = storage.filter(name__startswith="storage-b")
    assert {v.figures["credit_state"] for v in draining} == {"draining"}
    assert all(v.status == "warning" for v in draining)
    assert {v.figures["credit_state"] for v in storage.exclude(name__startswith="storage-b")} == {
        "not draining"
    }
    page = logged_in_client.get(reverse("raid:host_detail", args=[raid_host.pk])).content.decode()
    assert "md99 slows in ~" in page and "the gp2 volumes of storage-b drain first" in page
    galera = Volume.objects.get(name="galera-db-1-data")
    assert galera.figures["credit_state"] == "draining"
    assert "Galera node 10.0.0.1:3306 of Demo: 4-node MariaDB Galera" in galera.reason
    page = logged_in_client.get(
        reverse("galera:cluster_detail", args=[cluster.pk])
    ).content.decode()
    assert "galera-db-1-data" in page and "private address 10.0.0.1" in page

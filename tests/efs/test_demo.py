"""Demo mode: the fleet is created in the stand-in, collected, judged and shown.

The clock starts at a fixed instant (``NOON``), so which of the two "draining" file systems is
draining, and every minute the stand-in generates, do not depend on when the test runs.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
import time_machine
from django.urls import reverse

from apps.efs import demo, tasks
from apps.efs.demo_workloads import DEMO_FLEET
from apps.efs.metrics import implied_ops_limit
from apps.efs.models import FileSystem, MetricMinute, RegionCollection
from tests.helpers import demo_account_on_standin

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

#: 12:00:05 UTC: "demo-builds-primary" is at 23:40 of its day (credits gone), its replica
#: ("demo-builds-replica") at 11:40 (draining), and neither replication is in its stall hour.
NOON = datetime(2026, 11, 26, 12, 0, 5, tzinfo=UTC)


def collect_demo(settings, regions: set[str] | None = None):
    with time_machine.travel(NOON), demo_account_on_standin(settings) as account:
        assert demo.set_up() == len(DEMO_FLEET)
        assert demo.set_up() == 0  # idempotent
        for region in account.regions.filter(enabled=True):
            if regions is None or region.code in regions:
                rc, _ = RegionCollection.objects.get_or_create(region=region)
                tasks.collect_region(rc.pk, region=region.code)


@pytest.fixture
def demo_fleet(settings):
    collect_demo(settings)


@pytest.fixture
def builds_regions(settings):
    """Only the two regions of the two "draining" file systems, half a day apart."""
    collect_demo(settings, {"us-east-1", "eu-west-1"})


def test_it_collects_the_demo_fleet_with_one_heading_for_credit_exhaustion(demo_fleet):
    filesystems = FileSystem.objects.all()
    assert filesystems.count() == len(DEMO_FLEET)
    # The first collection reaches 3 h back: enough for a credit forecast.
    assert MetricMinute.objects.count() >= len(DEMO_FLEET) * 170
    draining = [fs for fs in filesystems if fs.tags.get("vigil:demo-profile") == "draining"]
    states = {fs.figures.get("credit_state") for fs in draining}
    assert "draining" in states
    heading = next(fs for fs in draining if fs.figures.get("credit_state") == "draining")
    assert heading.figures["hours_to_exhaustion"] > 0
    io_bound = filesystems.get(name="demo-sessions-small-io")
    assert io_bound.figures["io_limit_pct"] > 90
    assert io_bound.status == "warning" and "PercentIOLimit" in io_bound.reason
    elastic = filesystems.get(name="demo-ml-elastic")
    assert elastic.throughput_mode == "elastic" and elastic.figures["credit_balance_bytes"] is None
    # Elastic: no PercentIOLimit, permitted throughput at the documented write limit of its
    # Region (us-west-2: 5 GiB/s written, 60 GiB/s read), headroom against the documented limits.
    assert elastic.figures["io_limit_pct"] is None
    assert elastic.figures["permitted_mibps"] == 5 * 1024
    assert elastic.figures["headroom_read_mibps_limit"] == 60 * 1024
    assert elastic.figures["headroom_write_iops_limit"] == 50_000
    assert elastic.figures["headroom_combined_pct_limit"] == 100
    # It reads 150 MiB/s all day: Elastic bills every byte, provisioning its peak is cheaper.
    assert elastic.figures["cost_best_mode"] == "provisioned"
    assert elastic.figures["cost_saving_usd"] > 10_000
    assert elastic.figures["cost_elastic_fits"] is True
    # Archive data (DescribeFileSystems): AWS allows it with Elastic only, nothing else offered.
    archive = filesystems.get(name="demo-cold-archive")
    assert archive.size_archive_bytes == 900 * 2**30 and archive.size_standard_bytes == 2**30
    assert archive.figures["cost_best_mode"] == "elastic"
    assert archive.figures["cost_bursting_usd"] is None
    assert archive.figures["cost_provisioned_usd"] is None
    assert "Archive, which AWS allows only with Elastic" in archive.figures["cost_reason"]
    provisioned = filesystems.get(name="demo-media-provisioned")
    assert provisioned.provisioned_mibps == 64 and provisioned.figures["permitted_mibps"] == 64
    assert provisioned.figures["credit_balance_bytes"] is None
    assert provisioned.figures["cost_saving_usd"] > 0  # 64 MiB/s for an hour's job a day
    # Near today's 35,000 reads / 7,000 writes; the implied limit is the one its own minute's
    # PercentIOLimit gives, exactly (at 100 % it is the rate itself, not one bit under it).
    ops = io_bound.figures["headroom_ops"]
    assert ops > 30_000
    assert io_bound.figures["headroom_ops_limit"] == implied_ops_limit(
        ops, io_bound.figures["io_limit_pct"]
    )
    # Replication: the primary's replica in eu-west-1, synced every 5 minutes.
    primary = filesystems.get(name="demo-builds-primary")
    replica = filesystems.get(name="demo-builds-replica")
    (destination,) = primary.replicas
    assert destination["destination"] == replica.filesystem_id
    assert destination["region"] == "eu-west-1" and destination["status"] == "ENABLED"
    assert 0 < primary.figures["replica_lag_minutes"] < 15
    assert "replica" not in primary.reason


def test_it_draws_the_demo_file_system_page_with_a_dashed_forecast(
    builds_regions, logged_in_client
):
    heading = next(
        fs for fs in FileSystem.objects.all() if fs.figures.get("credit_state") == "draining"
    )
    with time_machine.travel(NOON):  # the page's "now" is the collection's
        page = logged_in_client.get(
            reverse("efs:filesystem_detail", args=[heading.pk]) + "?range=3h"
        )
    assert page.status_code == 200
    credits = page.context["charts"]["credits"]
    forecast = credits["series"][-1]
    assert forecast["label"] == "Forecast" and forecast["dash"] is True
    assert forecast["values"][-1] == 0.0 and credits["x"][-1] > credits["x"][0]
    text = page.content.decode()
    assert "credits run out in" in text
    # The page tells documented figures from measured ones, and names its sources.
    assert 'I/O limit <span class="muted">(measured)</span>' in text
    assert "Against documented limits" in text and "(read 2026-11-26:" in text
    assert "https://docs.aws.amazon.com/efs/latest/ug/limits.html" in text
    assert "holds at most 2.1" in text  # 200 GiB of Standard: 2.1 TiB of credits at most
    # The text alternative shows the measured balance at its own time, not the forecast's end.
    assert re.search(
        r"Latest: Burst credits [0-9.]+ GiB \(<time[^>]*>[^<]+</time>\) · Forecast 0 GiB \(<time",
        " ".join(text.split()),  # as a browser shows it: runs of white space are one space
    )


def test_it_lists_the_demo_fleet_on_the_region_page(builds_regions, logged_in_client):
    region = FileSystem.objects.get(name="demo-sessions-small-io").region
    page = logged_in_client.get(reverse("regions:detail", args=[region.pk])).content.decode()
    assert "demo-sessions-small-io" in page and "efs-table" in page


def test_it_discovers_a_restarted_stand_ins_new_file_systems_at_once(settings):
    from datetime import timedelta

    collect_demo(settings, {"us-east-1"})
    later = NOON + timedelta(hours=1)
    RegionCollection.objects.update(next_discovery=later, next_due=later)
    collect_demo(settings, set())  # the stand-in restarted: empty, the fleet created anew
    assert not RegionCollection.objects.filter(next_discovery=later).exists()

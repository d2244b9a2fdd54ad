"""The EBS panel on the region page, the volume page (forecast, charts, cost advice), the API
and /metrics, on rows saved as a collection leaves them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from apps.ebs import collect, history
from apps.ebs.models import Instance, RegionCollection, Volume
from apps.lib.cloudwatch import align
from apps.prometheus.collector import render
from apps.regions.models import Account, Region

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(db):
    """A draining 50 GiB gp2 volume on db-1 with an hour of minutes, judged as a cycle does."""
    account = Account.objects.create(name="prod")
    region = Region.objects.create(account=account, code="eu-west-1", opt_in_status="opted-in")
    rc = RegionCollection.objects.create(region=region)
    db1 = Instance.objects.create(
        region=region, instance_id="i-0abc", name="db-1", instance_type="m5.large",
        private_ips=["10.0.1.10"], root_device="/dev/sda1",
    )  # fmt: skip
    vol = Volume.objects.create(
        region=region, volume_id="vol-0def", name="db-1-data", volume_type="gp2", size_gib=50,
        instance=db1, device="/dev/sdf",
    )  # fmt: skip
    now = timezone.now()
    end = align(now)
    minutes = {
        end - timedelta(minutes=60 - i): {
            "read_ops": 600.0 * 60 * 0.7,
            "write_ops": 600.0 * 60 * 0.3,
            "read_bytes": 25200 * 16384.0,
            "write_bytes": 10800 * 16384.0,
            "read_time": 20.0,
            "write_time": 10.0,
            "idle_time": 0.0,
            "queue_length": 3.0,
            "burst_balance": 100.0 - i * 0.8,
            "stalled": 0.0,
            "iops_exceeded": 0.0,
        }  # fmt: skip
        for i in range(60)
    }
    history.save({"vol-0def": minutes}, {}, {"vol-0def": vol.pk}, {})
    collect.judge_region(rc, now)
    vol.refresh_from_db()
    return vol, now


def test_the_region_page_lists_the_volume_worst_first_with_when_its_credits_run_out(
    judged, logged_in_client
):
    vol, _ = judged
    page = logged_in_client.get(reverse("regions:detail", args=[vol.region_id])).content.decode()
    assert "db-1-data (vol-0def)" in page and "db-1<br>" in page
    panel = logged_in_client.get(reverse("regions:panel", args=[vol.region_id, "ebs"]))
    assert panel.status_code == 200 and "Credits run out in" in panel.content.decode()
    home = logged_in_client.get(reverse("regions:home")).content.decode()
    assert "EBS" in home


def test_the_volume_page_shows_the_forecast_the_charts_and_the_gp3_advice(judged, logged_in_client):
    vol, _ = judged
    assert vol.status == "warning" and vol.reason.startswith("gp2 burst credits run out in ~")
    page = logged_in_client.get(reverse("ebs:volume_detail", args=[vol.pk])).content.decode()
    assert "Burst balance and forecast (dashed)" in page
    assert "gp3 instead of gp2:" in page and "free baseline (3,000 IOPS, 125 MiB/s)" in page
    assert "saves $1.00 a month" in page  # 50 GB: $5.00 as gp2, $4.00 as gp3
    assert "gp3&#x27;s baseline covers even its peaks" in page
    live = logged_in_client.get(reverse("ebs:volume_detail", args=[vol.pk]), HTTP_HX_REQUEST="true")
    assert live.content.decode().lstrip().startswith('<div id="live"')
    csv = logged_in_client.get(
        reverse("ebs:volume_detail", args=[vol.pk]) + "?chart=burst&format=csv"
    )
    assert csv.status_code == 200 and "Forecast" in csv.content.decode().splitlines()[0]


def test_the_api_lists_volumes_with_figures_series_and_cost(judged, logged_in_client):
    vol, _ = judged
    listed = logged_in_client.get("/api/ebs/volumes/?region=eu-west-1").json()
    (row,) = listed["results"]
    assert row["volume_id"] == "vol-0def" and row["instance_id"] == "i-0abc"
    assert row["figures"]["credit_state"] == "draining"
    series = logged_in_client.get(f"/api/ebs/volumes/{vol.pk}/series/?range=1h").json()
    assert len(series["x"]) == len(series["burst_balance"]) and series["read_iops"][0] == 420.0
    assert logged_in_client.get(f"/api/ebs/volumes/{vol.pk}/series/?range=9y").status_code == 400
    cost = logged_in_client.get(f"/api/ebs/volumes/{vol.pk}/cost/").json()
    assert cost["monthly_usd"] == 5.0 and cost["advice"]["saving_usd"] == 1.0
    assert cost["advice"]["baseline_covers_peaks"] is True
    instances = logged_in_client.get("/api/ebs/instances/").json()["results"]
    assert instances[0]["figures"] == {} or "instance" not in instances[0]["figures"]


def test_metrics_export_the_balance_and_the_time_left_never_a_missing_figure(judged):
    vol, _ = judged
    body, _ = render()
    families = {f.name: f for f in text_string_to_metric_families(body.decode())}
    (balance,) = families["vigil_ebs_burst_balance_percent"].samples
    assert balance.labels["volume_id"] == "vol-0def" and balance.labels["instance_id"] == "i-0abc"
    (left,) = families["vigil_ebs_burst_exhaustion_seconds"].samples
    assert left.value == pytest.approx(vol.figures["hours_to_exhaustion"] * 3600)
    assert families["vigil_ebs_instance_io_balance_percent"].samples == []

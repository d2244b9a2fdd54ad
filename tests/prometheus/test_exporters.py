"""What each concern exports: its stored figures in base units, with region labels; a missing
figure is no sample (never a 0); one status sample per subject and status."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from apps.efs import collect, history, pricing
from apps.efs.metrics import GIB, TIB, Sample
from apps.efs.models import FileSystem, RegionCollection
from apps.galera.models import Cluster
from apps.lib.cloudwatch import align
from apps.probes.models import Result, Target
from apps.prometheus.collector import render
from apps.raid.collect import ingest
from apps.raid.models import Array, Host
from apps.regions.models import Account, Region
from tests.helpers import SHARED_FIXTURES

pytestmark = pytest.mark.django_db
MIB = 1024 * 1024
#: The labels of every series of a subject in ``region``.
WHERE = {"region": "eu-west-1", "account": "prod"}


def scrape() -> dict[str, dict[tuple, float]]:
    """``{metric: {sorted label items: value}}`` through prometheus-client's text parser."""
    body, _ = render()
    return {
        family.name: {tuple(sorted(s.labels.items())): s.value for s in family.samples}
        for family in text_string_to_metric_families(body.decode())
    }


def only(metric: dict[tuple, float]) -> tuple[dict[str, str], float]:
    assert len(metric) == 1, metric
    ((labels, value),) = metric.items()
    return dict(labels), value


@pytest.fixture
def region() -> Region:
    account = Account.objects.create(name=WHERE["account"])
    return Region.objects.create(account=account, code=WHERE["region"])


def test_it_exports_a_file_systems_figures_as_the_collection_judged_them(region):
    rc = RegionCollection.objects.create(region=region)
    fs = FileSystem.objects.create(region=region, filesystem_id="fs-0123abcd", name="home")
    now = timezone.now()
    end = align(now - timedelta(minutes=3))
    # 0.3 TiB of credits left, spending 1 GiB a minute (about 5 h), at 42 % of the I/O limit.
    history.save_samples(
        {
            fs.pk: [
                Sample(
                    end - timedelta(minutes=180 - i),
                    burst_credit_balance=0.3 * TIB + (180 - i) * GIB,
                    storage_standard_bytes=100 * GIB,
                    percent_io_limit=42.0,
                    permitted_throughput=105 * MIB,
                    metered_bytes=21 * MIB * 60,
                )
                for i in range(180)
            ]
        }
    )
    collect.judge_region(rc, now)
    fs.refresh_from_db()
    figures = fs.figures
    assert fs.status == "warning" and figures["credit_state"] == "draining"

    metrics = scrape()
    labels, io = only(metrics["vigil_efs_io_limit_percent"])
    assert labels == {**WHERE, "filesystem_id": "fs-0123abcd", "name": "home"}
    assert io == 42.0
    _, balance = only(metrics["vigil_efs_burst_credit_balance_bytes"])
    assert balance == pytest.approx(figures["credit_balance_bytes"])
    _, left = only(metrics["vigil_efs_burst_credit_exhaustion_seconds"])
    assert left == pytest.approx(figures["hours_to_exhaustion"] * 3600)
    assert 4 * 3600 < left < 6 * 3600
    _, permitted = only(metrics["vigil_efs_permitted_throughput_bytes_per_second"])
    assert permitted == pytest.approx(figures["permitted_mibps"] * MIB)
    _, used = only(metrics["vigil_efs_throughput_utilisation_percent"])
    assert used == pytest.approx(figures["throughput_utilisation_pct"])
    _, last = only(metrics["vigil_efs_last_data_timestamp_seconds"])
    assert last == datetime.fromisoformat(figures["last_data_at"]).timestamp()
    status = metrics["vigil_subject_status"]
    assert {dict(k)["status"]: v for k, v in status.items()} == {
        "ok": 0.0,
        "warning": 1.0,
        "critical": 0.0,
        "unknown": 0.0,
    }
    assert {dict(k)["subject"] for k in status} == {"fs-0123abcd"}


def test_it_exports_what_each_throughput_mode_would_cost_and_the_cheapest(region):
    rc = RegionCollection.objects.create(region=region)
    fs = FileSystem.objects.create(
        region=region,
        filesystem_id="fs-0123abcd",
        name="media",
        throughput_mode="provisioned",
        provisioned_mibps=64,
        size_standard_bytes=100 * GIB,
    )
    now = timezone.now()
    end = align(now - timedelta(minutes=3))
    minutes = [
        Sample(end - timedelta(minutes=180 - i), metered_bytes=2 * MIB * 60, total_count=600.0)
        for i in range(180)
    ]
    history.save_samples({fs.pk: minutes})
    assert pricing.price_region(rc, now) == 1
    assert pricing.price_region(rc, now) == 0  # fresh for pricing.REFRESH
    collect.judge_region(rc, now)  # a verdict keeps the stored comparison
    fs.refresh_from_db()
    assert (
        fs.figures["cost_best_mode"] == "bursting"
        and fs.figures["throughput_mode"] == "provisioned"
    )

    metrics = scrape()
    by_mode = {
        dict(k)["mode"]: v for k, v in metrics["vigil_efs_mode_monthly_cost_dollars"].items()
    }
    assert by_mode == {"bursting": 30.0, "elastic": 30.0, "provisioned": 30.0}
    fits = {dict(k)["mode"]: v for k, v in metrics["vigil_efs_mode_fits"].items()}
    assert fits == {"bursting": 1.0, "elastic": 1.0, "provisioned": 1.0}
    labels, one = only(metrics["vigil_efs_cheapest_mode"])
    assert (labels["mode"], labels["filesystem_id"], one) == ("bursting", "fs-0123abcd", 1.0)
    current = 30 + (64 - 100 * 50 / 1024) * 6
    assert only(metrics["vigil_efs_monthly_cost_dollars"])[1] == pytest.approx(current, abs=0.01)
    saving = only(metrics["vigil_efs_cheapest_mode_saving_dollars"])[1]
    assert saving == pytest.approx(current - 30, abs=0.01)


def test_it_leaves_out_a_figure_that_is_missing_instead_of_exporting_zero(region):
    FileSystem.objects.create(
        region=region,
        filesystem_id="fs-elastic",
        throughput_mode="elastic",
        figures={"io_limit_pct": 0.0, "credit_balance_bytes": None, "throughput_mode": "elastic"},
    )
    FileSystem.objects.create(region=region, filesystem_id="fs-new")  # never collected
    metrics = scrape()
    # A real 0 is exported; None and absent keys are not.
    assert only(metrics["vigil_efs_io_limit_percent"])[1] == 0.0
    assert metrics["vigil_efs_burst_credit_balance_bytes"] == {}
    assert metrics["vigil_efs_burst_credit_exhaustion_seconds"] == {}
    unknown = [dict(k) for k, v in metrics["vigil_subject_status"].items() if v == 1.0]
    assert {(u["subject"], u["status"]) for u in unknown} == {
        ("fs-elastic", "unknown"),
        ("fs-new", "unknown"),
    }


def test_it_leaves_out_deleted_file_systems(region):
    FileSystem.objects.create(
        region=region, filesystem_id="fs-gone", deleted=timezone.now(), figures={"io_limit_pct": 5}
    )
    metrics = scrape()
    assert metrics["vigil_efs_io_limit_percent"] == {}
    assert metrics["vigil_subject_status"] == {}


def test_it_exports_a_galera_clusters_last_poll(region):
    polled = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    Cluster.objects.create(
        region=region,
        name="orders",
        expected_data_nodes=3,
        expected_arbitrators=1,
        status="critical",
        polled_at=polled,
        cluster_size=2,
        primary=False,
        arbitrators=1,
        one_by_one=0,
        simultaneous=0,
        flow_control_paused=0.25,
    )
    metrics = scrape()
    labels, size = only(metrics["vigil_galera_cluster_size"])
    assert labels == {**WHERE, "cluster": "orders"}
    assert size == 2.0
    assert only(metrics["vigil_galera_expected_cluster_size"])[1] == 4.0
    assert only(metrics["vigil_galera_primary"])[1] == 0.0
    assert only(metrics["vigil_galera_headroom_one_by_one_nodes"])[1] == 0.0
    assert only(metrics["vigil_galera_headroom_at_once_nodes"])[1] == 0.0
    assert only(metrics["vigil_galera_flow_control_paused_ratio"])[1] == 0.25
    assert only(metrics["vigil_galera_polled_timestamp_seconds"])[1] == polled.timestamp()
    assert metrics["vigil_galera_data_nodes"] == {}  # not Primary: not established


def test_it_exports_nothing_but_the_status_of_a_cluster_never_polled(region):
    Cluster.objects.create(region=region, name="new")
    metrics = scrape()
    assert metrics["vigil_galera_cluster_size"] == {}
    assert metrics["vigil_galera_primary"] == {}
    assert only(metrics["vigil_galera_expected_cluster_size"])[1] == 3.0
    assert len(metrics["vigil_subject_status"]) == 4


def test_it_exports_md_arrays_from_a_real_report(site):
    host = Host.objects.create(name="nas", region=site)
    degraded = (SHARED_FIXTURES / "mdstat" / "pymdstat-05-raid5-recovery.txt").read_text()
    ingest(host, degraded)
    array = Array.objects.get(name="md127")
    metrics = scrape()
    labels, value = only(metrics["vigil_raid_degraded"])
    labels_key = tuple(sorted(labels.items()))
    assert labels == {"region": "lab", "account": "", "host": "nas", "array": "md127"}
    assert value == 1.0
    assert only(metrics["vigil_raid_disks"])[1] == 6.0
    assert only(metrics["vigil_raid_active_disks"])[1] == 5.0
    assert only(metrics["vigil_raid_headroom_disks"])[1] == array.headroom == 0
    assert only(metrics["vigil_raid_sync_progress_percent"])[1] == 12.6
    assert only(metrics["vigil_raid_sync_speed_bytes_per_second"])[1] == 33440 * 1024
    assert only(metrics["vigil_raid_sync_eta_seconds"])[1] == pytest.approx(127.5 * 60)
    domains = metrics["vigil_raid_headroom_domains"]
    assert domains == ({} if array.domain_headroom is None else {labels_key: 0.0})
    on = [dict(k) for k, v in metrics["vigil_subject_status"].items() if v == 1.0]
    assert on == [
        {
            "concern": "raid",
            "region": "lab",
            "account": "",
            "subject": "nas:md127",
            "status": array.status,
        }
    ]


def test_it_exports_a_clean_array_as_not_degraded_without_a_sync(site):
    host = Host.objects.create(name="db1", region=site)
    clean = (SHARED_FIXTURES / "mdstat" / "einverne-raid1-4disk-bitmap.txt").read_text()
    ingest(host, clean)
    metrics = scrape()
    assert set(metrics["vigil_raid_degraded"].values()) == {0.0}
    assert metrics["vigil_raid_sync_progress_percent"] == {}


def test_it_exports_each_probe_targets_latest_result(region):
    now = timezone.now()
    target = Target.objects.create(region=region, url="https://shop.example.com/", status="ok")
    down = Target.objects.create(
        region=region, name="api", url="https://api.example.com/", status="critical"
    )
    Target.objects.create(region=region, url="https://new.example.com/")  # never probed
    for age, idle in ((30, 4.0), (15, 60.0)):  # the latest one counts
        Result.objects.create(
            target=target,
            created=now - timedelta(minutes=age),
            started_at=now - timedelta(minutes=age, seconds=61),
            status_code=200,
            idle_timeout_s=idle,
            advertised_timeout_s=60.0,
            cap_s=1200.0,
            tls_expires=now + timedelta(days=40),
            status="ok",
        )
    Result.objects.create(
        target=down, started_at=now, error="connection refused", cap_s=1200.0, status="critical"
    )
    metrics = scrape()

    idle = metrics["vigil_probe_keepalive_idle_timeout_seconds"]
    labels, value = only(idle)
    assert labels == {
        **WHERE,
        "target": "https://shop.example.com/",
        "url": "https://shop.example.com/",
    }
    assert value == 60.0
    up = {dict(k)["target"]: v for k, v in metrics["vigil_probe_up"].items()}
    assert up == {"https://shop.example.com/": 1.0, "api": 0.0}
    expiry = only(metrics["vigil_probe_tls_expiry_timestamp_seconds"])[1]
    assert expiry == pytest.approx((now + timedelta(days=40)).timestamp())
    assert len(metrics["vigil_probe_keepalive_cap_seconds"]) == 2
    assert len(metrics["vigil_subject_status"]) == 3 * 4


def test_it_gives_every_concern_one_help_and_type_and_status_family_once(region, site):
    FileSystem.objects.create(region=region, filesystem_id="fs-1", status="ok")
    Cluster.objects.create(region=region, name="c", status="ok")
    Target.objects.create(region=region, url="https://a.example.com/", status="ok")
    ingest(Host.objects.create(name="h", region=site), "Personalities : \nunused devices: <none>\n")
    body = render()[0].decode()
    assert body.count("# TYPE vigil_subject_status gauge") == 1
    concerns_seen = {
        s.labels["concern"]
        for f in text_string_to_metric_families(body)
        if f.name == "vigil_subject_status"
        for s in f.samples
    }
    assert concerns_seen == {"efs", "galera", "probes"}


def test_it_counts_a_file_systems_nfs_clients_reporting_and_stale(region, settings):
    from apps.efs.client_push import read_push, store
    from tests.efs.builders import mountstats

    fs = FileSystem.objects.create(region=region, filesystem_id="fs-0123abcd", name="shared")
    now = timezone.now()
    for host, at in (("web-1", now), ("web-2", now), ("old-1", now - timedelta(hours=1))):
        store(*read_push({"hostname": host, "mountstats": mountstats()}), now=at)
    by_state = {labels[-1][1]: value for labels, value in scrape()["vigil_efs_nfs_clients"].items()}
    assert by_state == {"reporting": 2, "stale": 1}
    assert fs.pk

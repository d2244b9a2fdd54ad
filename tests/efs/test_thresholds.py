"""Thresholds per file system and per region: one set for a scratch file system changes its
status only, one set for the region applies to its file systems unless one sets its own, and
the reason says which threshold applied; admins set them through the API, beside the defaults."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from auditlog.models import LogEntry

from apps.efs import collect
from apps.efs.metrics import Sample
from apps.efs.models import FileSystem
from apps.efs.verdict import SPECS, Thresholds, filesystem_verdict
from apps.lib.status import Status
from apps.lib.thresholds import resolve
from apps.regions import thresholds
from apps.regions.models import Account, Region, Threshold

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def io_bound(percent: float, minutes: int = 45) -> list[Sample]:
    return [
        Sample(timestamp=NOW - timedelta(minutes=minutes - i), percent_io_limit=percent,
               burst_credit_balance=2e12)
        for i in range(minutes)
    ]  # fmt: skip


def test_a_lower_threshold_of_its_own_warns_and_says_so():
    own = resolve(
        SPECS, Thresholds(), {}, {"io_limit_pct": 60}, noun="file system", region_label="x"
    )
    verdict = filesystem_verdict(io_bound(70.0), NOW, thresholds=own)
    assert verdict.status is Status.WARNING
    assert verdict.reason == (
        "PercentIOLimit above 60 % (this file system's threshold; default 90 %) for 15 min"
    )
    assert filesystem_verdict(io_bound(70.0), NOW).status is Status.OK


@pytest.fixture
def region(db):
    account = Account.objects.create(name="prod")
    return Region.objects.create(account=account, code="us-east-1", opt_in_status="opted-in")


def judged(region: Region) -> dict:
    resolve_one = thresholds.resolver("efs", region, collect.thresholds())
    return {
        fs.filesystem_id: collect.judge(fs, io_bound(70.0), NOW, resolve_one(fs), "")
        for fs in FileSystem.objects.select_related("region")
    }


def test_a_per_file_system_threshold_changes_that_file_system_and_no_other(region):
    scratch = FileSystem.objects.create(region=region, filesystem_id="fs-scratch")
    FileSystem.objects.create(region=region, filesystem_id="fs-prod")
    thresholds.replace("efs", region, scratch.pk, {"io_limit_pct": 60})
    found = judged(region)
    assert found["fs-scratch"].status is Status.WARNING
    assert "(this file system's threshold; default 90 %)" in found["fs-scratch"].reason
    assert found["fs-prod"].status is Status.OK


def test_a_region_threshold_applies_to_its_file_systems_unless_one_sets_its_own(region):
    FileSystem.objects.create(region=region, filesystem_id="fs-a")
    own = FileSystem.objects.create(region=region, filesystem_id="fs-own")
    elsewhere = Region.objects.create(account=region.account, code="eu-west-1")
    FileSystem.objects.create(region=elsewhere, filesystem_id="fs-far")
    thresholds.replace("efs", region, None, {"io_limit_pct": 60})
    thresholds.replace("efs", region, own.pk, {"io_limit_pct": 80})
    found = judged(region)
    assert found["fs-a"].status is Status.WARNING
    assert "(us-east-1's threshold; default 90 %)" in found["fs-a"].reason
    assert found["fs-own"].status is Status.OK  # its own 80 % wins over the region's 60 %
    far = FileSystem.objects.get(filesystem_id="fs-far")
    resolved = thresholds.resolver("efs", elsewhere, collect.thresholds())(far)
    assert resolved.io_limit_pct == 90


def test_admins_set_them_through_the_api_operators_may_not(region, admin_client, client, operator):
    fs = FileSystem.objects.create(region=region, filesystem_id="fs-1")
    url = f"/api/efs/filesystems/{fs.pk}/thresholds/"
    shown = admin_client.get(url).json()
    assert shown["own"] == {} and shown["defaults"]["io_limit_pct"] == 90
    assert shown["applied"]["io_limit_pct"] == {"value": 90, "level": "default"}
    for bad in (
        {"io_limit_pct": 0},
        {"nope": 1},
        {"io_limit_pct": "high"},
        {"exhaustion_warning_hours": 1, "exhaustion_critical_hours": 2},
    ):
        assert admin_client.put(url, bad, content_type="application/json").status_code == 400
    assert not Threshold.objects.exists()
    good = admin_client.put(url, {"io_limit_pct": 70}, content_type="application/json")
    assert good.status_code == 200 and good.json()["own"] == {"io_limit_pct": 70.0}
    assert good.json()["applied"]["io_limit_pct"] == {"value": 70.0, "level": "subject"}
    client.force_login(operator)
    refused = client.put(url, {"io_limit_pct": 20}, content_type="application/json")
    assert refused.status_code == 403
    assert thresholds.table("efs", region, fs.pk)[0].subject == 70.0
    entry = LogEntry.objects.get_for_model(Threshold).get()
    assert entry.actor.is_superuser and "70" in str(entry.changes)


def test_the_region_endpoint_sets_the_region_level(region, admin_client):
    url = f"/api/regions/{region.pk}/thresholds/efs/"
    put = admin_client.put(url, {"utilisation_pct": 75}, content_type="application/json")
    assert put.status_code == 200
    assert put.json()["applied"]["utilisation_pct"] == {"value": 75.0, "level": "region"}
    assert admin_client.get(f"/api/regions/{region.pk}/thresholds/nothing/").status_code == 404

"""Thresholds per file system: one set for a scratch file system changes its status only, and
the reason says which threshold applied; admins set them through the API, beside the defaults."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from apps.efs import collect
from apps.efs.metrics import Sample
from apps.efs.models import FileSystem
from apps.efs.verdict import Thresholds, check_overrides, filesystem_verdict, with_overrides
from apps.lib.status import Status
from apps.regions.models import Account, Region

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def io_bound(percent: float, minutes: int = 45) -> list[Sample]:
    return [
        Sample(timestamp=NOW - timedelta(minutes=minutes - i), percent_io_limit=percent,
               burst_credit_balance=2e12)
        for i in range(minutes)
    ]  # fmt: skip


def test_a_lower_threshold_of_its_own_warns_and_says_so():
    own = with_overrides(Thresholds(), {"io_limit_pct": 60})
    verdict = filesystem_verdict(io_bound(70.0), NOW, thresholds=own)
    assert verdict.status is Status.WARNING
    assert verdict.reason == (
        "PercentIOLimit above 60 % (this file system's threshold; default 90 %) for 15 min"
    )
    assert filesystem_verdict(io_bound(70.0), NOW).status is Status.OK


def test_bad_thresholds_are_refused_in_words():
    for bad, words in [
        ({"io_limit_pct": 150}, "between 1 and 100 %"),
        ({"nope": 1}, "No threshold 'nope'"),
        ({"io_limit_pct": "high"}, "give a number"),
        ({"exhaustion_warning_hours": 1, "exhaustion_critical_hours": 2}, "must not be above"),
    ]:
        with pytest.raises(ValueError, match=words):
            check_overrides(bad)


@pytest.mark.django_db
def test_a_per_file_system_threshold_changes_that_file_system_and_no_other():
    account = Account.objects.create(name="prod")
    region = Region.objects.create(account=account, code="us-east-1", opt_in_status="opted-in")
    FileSystem.objects.create(
        region=region, filesystem_id="fs-scratch", thresholds={"io_limit_pct": 60}
    )
    production = FileSystem.objects.create(region=region, filesystem_id="fs-prod")
    th = collect.thresholds()
    judged = {
        fs.filesystem_id: collect.judge(fs, io_bound(70.0), NOW, th, "")
        for fs in FileSystem.objects.select_related("region")
    }
    assert judged["fs-scratch"].status is Status.WARNING
    assert "this file system's threshold" in judged["fs-scratch"].reason
    assert judged["fs-prod"].status is Status.OK
    assert production.thresholds == {}


@pytest.mark.django_db
def test_admins_set_them_through_the_api_operators_may_not(admin_client, client, operator):
    account = Account.objects.create(name="prod")
    region = Region.objects.create(account=account, code="us-east-1", opt_in_status="opted-in")
    fs = FileSystem.objects.create(region=region, filesystem_id="fs-1")
    url = f"/api/efs/filesystems/{fs.pk}/thresholds/"
    shown = admin_client.get(url).json()
    assert shown["own"] == {} and shown["defaults"]["io_limit_pct"] == 90
    bad = admin_client.put(url, {"io_limit_pct": 0}, content_type="application/json")
    assert bad.status_code == 400
    fs.refresh_from_db()
    assert fs.thresholds == {}
    good = admin_client.put(url, {"io_limit_pct": 70}, content_type="application/json")
    assert good.status_code == 200 and good.json()["own"] == {"io_limit_pct": 70.0}
    client.force_login(operator)
    refused = client.put(url, {"io_limit_pct": 20}, content_type="application/json")
    assert refused.status_code == 403
    fs.refresh_from_db()
    assert fs.thresholds == {"io_limit_pct": 70.0}

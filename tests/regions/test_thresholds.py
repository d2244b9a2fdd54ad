"""The "Thresholds" section of subject pages and of the region page: a form for admins,
read-only for others, each threshold beside the default; every change in the audit trail."""

from __future__ import annotations

import pytest
from auditlog.models import LogEntry

from apps.efs.models import FileSystem
from apps.regions import thresholds
from apps.regions.models import Account, Region, Threshold


@pytest.fixture
def fs(db):
    account = Account.objects.create(name="prod")
    region = Region.objects.create(account=account, code="us-east-1", opt_in_status="opted-in")
    return FileSystem.objects.create(region=region, filesystem_id="fs-scratch")


def test_admins_get_a_form_beside_the_defaults_and_save_it(fs, admin_client):
    page = admin_client.get(f"/efs/filesystems/{fs.pk}/").content.decode()
    assert "Save the thresholds" in page and "PercentIOLimit above" in page
    assert "90 %" in page  # the default beside it
    url = f"/regions/{fs.region.pk}/thresholds/efs/"
    sent = admin_client.post(url, {"subject": fs.pk, "io_limit_pct": "70", "combined_pct": ""})
    assert sent.status_code == 302 and sent["Location"] == fs.get_absolute_url()
    assert thresholds.table("efs", fs.region, fs.pk)[0].subject == 70.0
    page = admin_client.get(f"/efs/filesystems/{fs.pk}/").content.decode()
    assert '70 % <span class="muted">(this file system&#x27;s)</span>' in page
    assert LogEntry.objects.get_for_model(Threshold).count() == 1
    refused = admin_client.post(url, {"subject": fs.pk, "io_limit_pct": "700"})
    assert refused.status_code == 302
    assert thresholds.table("efs", fs.region, fs.pk)[0].subject == 70.0
    emptied = admin_client.post(url, {"subject": fs.pk, "io_limit_pct": ""})
    assert emptied.status_code == 302 and not Threshold.objects.exists()
    assert LogEntry.objects.get_for_model(Threshold).count() == 2  # created, then deleted


def test_the_region_page_sets_them_for_every_subject_there(fs, admin_client):
    region = fs.region
    assert "for every file system in us-east-1" in admin_client.get(f"/regions/{region.pk}/").text
    sent = admin_client.post(f"/regions/{region.pk}/thresholds/efs/", {"utilisation_pct": "80"})
    assert sent.status_code == 302 and sent["Location"].endswith("#thresholds")
    row = Threshold.objects.get()
    assert (row.subject_id, row.name, row.value) == (None, "utilisation_pct", 80.0)
    page = admin_client.get(f"/efs/filesystems/{fs.pk}/").content.decode()
    assert '80 % <span class="muted">(us-east-1&#x27;s)</span>' in page


def test_operators_read_them_and_may_not_change_them(fs, client, operator):
    client.force_login(operator)
    page = client.get(f"/efs/filesystems/{fs.pk}/").content.decode()
    assert "PercentIOLimit above" in page and "Save the thresholds" not in page
    url = f"/regions/{fs.region.pk}/thresholds/efs/"
    assert client.post(url, {"subject": fs.pk, "io_limit_pct": "1"}).status_code == 403
    assert not Threshold.objects.exists()


def test_a_subject_of_another_region_is_not_found(fs, admin_client):
    other = Region.objects.create(account=fs.region.account, code="eu-west-1")
    url = f"/regions/{other.pk}/thresholds/efs/"
    assert admin_client.post(url, {"subject": fs.pk, "io_limit_pct": "70"}).status_code == 404
    assert admin_client.post(f"/regions/{other.pk}/thresholds/nope/", {}).status_code == 404

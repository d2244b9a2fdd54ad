from __future__ import annotations

import boto3
import pytest

from apps.demo import mode
from apps.demo.standin import DEMO_REGIONS, AwsStandIn
from apps.regions.demo import ensure_demo_account
from apps.regions.models import Account
from tests.helpers import demo_account_on_standin


def test_it_serves_the_demo_regions_with_their_real_opt_in_status():
    # moto loads in the worker that runs this test, not in every worker collecting the module
    from moto.ec2.models.availability_zones_and_regions import RegionsAndZonesBackend

    moto_regions = RegionsAndZonesBackend.regions
    with AwsStandIn() as url:
        ec2 = boto3.client(
            "ec2",
            "us-east-1",
            endpoint_url=url,
            aws_access_key_id="demo",
            aws_secret_access_key="demo",
        )
        regions = {
            r["RegionName"]: r["OptInStatus"]
            for r in ec2.describe_regions(AllRegions=True)["Regions"]
        }
    assert regions == DEMO_REGIONS
    assert regions["ap-east-1"] == regions["me-south-1"] == "opted-in"
    assert RegionsAndZonesBackend.regions is moto_regions


@pytest.mark.slow  # over 1 s of CPU alone (docs/testing.md)
@pytest.mark.django_db
def test_it_discovers_the_demo_account_through_the_stand_in(settings):
    with demo_account_on_standin(settings) as account:
        pass
    shown = set(account.regions.filter(enabled=True).values_list("code", flat=True))
    assert shown == {c for c, s in DEMO_REGIONS.items() if s != "not-opted-in"}


@pytest.mark.django_db
def test_it_hides_the_demo_account_once_real_credentials_are_configured():
    ensure_demo_account(True)
    ensure_demo_account(False)
    assert not Account.objects.get(is_demo=True).enabled
    ensure_demo_account(True)
    assert Account.objects.filter(is_demo=True, enabled=True).count() == 1


def test_it_turns_demo_mode_on_only_without_credentials(settings, monkeypatch):
    settings.VIGIL_DEMO = "auto"
    assert not mode.demo_enabled()  # the test environment has keys
    mode.demo_enabled.cache_clear()
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    assert mode.demo_enabled()


@pytest.mark.django_db
def test_it_says_demo_account_on_every_page(settings, logged_in_client):
    settings.VIGIL_DEMO = "true"
    for url in ("/", "/accounts/keys/"):
        assert "Demo account" in logged_in_client.get(url).content.decode()
    settings.VIGIL_DEMO = "false"
    mode.demo_enabled.cache_clear()
    assert "Demo account" not in logged_in_client.get("/").content.decode()


@pytest.mark.django_db
def test_the_admin_says_demo_account_too(settings, admin_client):
    settings.VIGIL_DEMO = "true"
    assert "Demo account" in admin_client.get("/admin/").content.decode()
    settings.VIGIL_DEMO = "false"
    mode.demo_enabled.cache_clear()
    assert "Demo account" not in admin_client.get("/admin/").content.decode()

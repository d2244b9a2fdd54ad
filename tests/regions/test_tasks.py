from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.lib import leases
from apps.regions import tasks
from apps.regions.models import Account, Region

pytestmark = pytest.mark.django_db


def test_it_discovers_every_region_with_its_opt_in_status(aws):
    account = Account.objects.create(name="prod")
    tasks.discover_regions(account.pk)

    regions = {r.code: r for r in account.regions.all()}
    assert {"us-east-1", "eu-west-1", "ap-east-1", "me-south-1"} <= set(regions)
    frankfurt = regions["eu-central-1"]
    assert frankfurt.name == "Europe (Frankfurt)"
    assert frankfurt.opt_in_status == "opt-in-not-required" and frankfurt.enabled
    # moto's account has not opted in to Hong Kong: known, but not shown.
    assert regions["ap-east-1"].opt_in_status == "not-opted-in"
    assert not regions["ap-east-1"].enabled
    account.refresh_from_db()
    assert account.discovered is not None and account.last_error == ""


def test_it_keeps_a_users_choice_when_discovering_again(aws):
    account = Account.objects.create(name="prod")
    tasks.discover_regions(account.pk)
    Region.objects.filter(account=account, code="eu-west-1").update(enabled=False)
    tasks.discover_regions(account.pk)
    assert not Region.objects.get(account=account, code="eu-west-1").enabled
    assert Region.objects.filter(account=account, code="eu-west-1").count() == 1


def test_it_records_the_aws_error_when_credentials_fail(failing_aws):
    failing_aws("AuthFailure")
    account = Account.objects.create(name="broken")
    tasks.discover_regions(account.pk)
    account.refresh_from_db()
    assert account.last_error.startswith("AuthFailure: Refused by the test endpoint")
    assert account.next_discovery <= timezone.now() + timedelta(minutes=5)
    assert not account.regions.exists()


def test_it_hints_at_regional_sts_when_an_opt_in_region_rejects_the_token(failing_aws):
    failing_aws("InvalidToken", 400)
    account = Account.objects.create(name="hk", home_region="ap-east-1")
    tasks.discover_regions(account.pk)
    account.refresh_from_db()
    assert "regional STS" in account.last_error


def test_it_does_not_discover_an_account_twice_at_once(aws):
    account = Account.objects.create(name="prod")
    assert leases.acquire(Account, account.pk, timedelta(minutes=5))
    tasks.discover_regions(account.pk)
    assert not account.regions.exists()


def test_it_claims_each_due_account_once():
    Account.objects.create(name="prod")
    now = timezone.now()
    assert len(Account.claim_due_discoveries(now)) == 1
    assert Account.claim_due_discoveries(now) == []

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from apps.lib import leases
from apps.regions.models import Account

pytestmark = pytest.mark.django_db


def test_it_gives_a_lease_to_one_holder_only():
    account = Account.objects.create(name="prod")
    assert leases.acquire(Account, account.pk, timedelta(minutes=5))
    assert not leases.acquire(Account, account.pk, timedelta(minutes=5))


def test_it_takes_over_a_lease_that_expired():
    account = Account.objects.create(name="prod")
    assert leases.acquire(Account, account.pk, timedelta(minutes=5))
    with time_machine.travel(timezone.now() + timedelta(minutes=6)):
        assert leases.acquire(Account, account.pk, timedelta(minutes=5))


def test_it_releases_the_lease_when_the_work_is_done():
    account = Account.objects.create(name="prod")
    with leases.lease(Account, account.pk, timedelta(minutes=5)) as held:
        assert held
        with leases.lease(Account, account.pk, timedelta(minutes=5)) as second:
            assert not second
    assert leases.acquire(Account, account.pk, timedelta(minutes=5))


def test_a_holder_whose_lease_expired_cannot_release_the_next_holders():
    account = Account.objects.create(name="prod")
    slow = leases.acquire(Account, account.pk, timedelta(minutes=5))
    with time_machine.travel(timezone.now() + timedelta(minutes=6)):
        assert leases.acquire(Account, account.pk, timedelta(minutes=5))
        leases.release(Account, account.pk, slow)  # the slow worker finishes late
        assert not leases.acquire(Account, account.pk, timedelta(minutes=5))

"""Demo mode's NFS clients: their pushes read as real ones (the parser, the store), one top
talker, one with the lock trap."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from apps.efs import client_history, demo_clients
from apps.efs.models import FileSystem, NfsClient, NfsMount
from apps.efs.parse_mountstats import parse
from apps.regions.models import Account, Region

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)


def test_a_demo_clients_mountstats_reads_as_the_kernels():
    text = demo_clients.mountstats(
        "fs-1.efs.eu-west-1.amazonaws.com", demo_clients.GOOD, 60, (1000, 10, 2, 1, 6, 3)
    )
    (mount,) = parse(text)
    assert mount.error == "" and mount.read_bytes == 60_000 and mount.version == "4.1"
    assert mount.kinds()["read"]["ops"] == 120 and mount.kinds()["metadata"]["ops"] == 360


def test_the_demo_clients_push_for_the_demo_file_systems(settings):
    account = Account.objects.create(name="Demo", is_demo=True)
    region = Region.objects.create(account=account, code="eu-west-1")
    fs = FileSystem.objects.create(region=region, filesystem_id="fs-0123abcd", name="shared")
    assert demo_clients.push_all(T0) == 3
    assert demo_clients.push_all(T0 + timedelta(minutes=1)) == 3
    assert NfsMount.objects.filter(filesystem=fs).count() == 3
    shares = client_history.client_shares(
        fs, T0, T0 + timedelta(minutes=2), T0 + timedelta(minutes=2)
    )
    assert shares["rows"][0].name == "app-1"
    assert [g["names"] for g in shares["slow_lookups"]] == [["batch-7"]]
    assert NfsClient.objects.get(hostname="batch-7").slowest_lookup == 5.0

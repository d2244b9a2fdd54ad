"""Demo mode's NFS clients: their pushes read as real ones (the parser, the store), one top
talker, one with the lock trap."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from apps.efs import client_history, demo_clients
from apps.efs.demo_workloads import DEMO_FLEET, PROFILES, minute_values
from apps.efs.models import FileSystem, MetricMinute, NfsClient, NfsMount
from apps.efs.parse_mountstats import parse
from apps.regions.models import Account, Region

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)


def test_a_demo_clients_mountstats_reads_as_the_kernels():
    text = demo_clients.mountstats(
        "fs-1.efs.eu-west-1.amazonaws.com", demo_clients.GOOD, 60, (60_000, 600, 120, 60, 360, 3)
    )
    (mount,) = parse(text)
    assert mount.error == "" and mount.read_bytes == 60_000 and mount.version == "4.1"
    assert mount.kinds()["read"]["ops"] == 120 and mount.kinds()["metadata"]["ops"] == 360


def test_the_demo_clients_push_for_the_demo_file_systems(settings):
    account = Account.objects.create(name="Demo", is_demo=True)
    region = Region.objects.create(account=account, code="eu-west-1")
    fs = FileSystem.objects.create(
        region=region, filesystem_id="fs-0123abcd", name="demo-web-assets"
    )
    assert demo_clients.push_all(T0) == 3
    assert demo_clients.push_all(T0 + timedelta(minutes=1)) == 3
    assert NfsMount.objects.filter(filesystem=fs).count() == 3
    shares = client_history.client_shares(
        fs, T0, T0 + timedelta(minutes=2), T0 + timedelta(minutes=2)
    )
    assert shares["rows"][0].name == "app-1"
    assert [g["names"] for g in shares["slow_lookups"]] == [["batch-7"]]
    assert NfsClient.objects.get(hostname="batch-7").slowest_lookup == 5.0


def test_the_demo_clients_add_up_to_the_demo_cloudwatch_totals_within_the_metering_rules():
    """Ten minutes of the demo: its clients' pushes against the minutes the CloudWatch stand-in
    serves for the same file system (stored as collection stores them): bytes and operations
    that add up (within each client's rounding to whole counts), shares that sum to one, and
    the metered bytes within the clients' range."""
    account = Account.objects.create(name="Demo", is_demo=True)
    region = Region.objects.create(account=account, code="eu-west-1")
    fs = FileSystem.objects.create(
        region=region, filesystem_id="fs-0123abcd", name="demo-web-assets"
    )
    for minute in range(11):
        demo_clients.push_all(T0 + timedelta(minutes=minute))
    key, phase = next((k, p) for n, k, _, p in DEMO_FLEET if n == fs.name)
    columns = {f.name for f in MetricMinute._meta.fields}
    for minute in range(10):
        at = T0 + timedelta(minutes=minute)
        values = minute_values(
            PROFILES[key], 0x0123ABCD % 997, int(at.timestamp()) // 60, phase, region="eu-west-1"
        )
        MetricMinute.objects.create(
            filesystem=fs, ts=at, **{k: v for k, v in values.items() if k in columns}
        )
    now = T0 + timedelta(minutes=10)
    shares = client_history.client_shares(fs, T0, now, now)
    totals, cw = shares["totals"], shares["cloudwatch"]
    clients = len(demo_clients.CLIENTS)
    for mine, theirs in (
        ("read_bytes", "data_read_bytes"),
        ("write_bytes", "data_write_bytes"),
        ("read_ops", "data_read_count"),
        ("write_ops", "data_write_count"),
        ("metadata_ops", "metadata_count"),
    ):
        assert cw[theirs] > 0
        assert abs(totals[mine] - cw[theirs]) <= clients, (mine, totals[mine], cw[theirs])
    assert sum(r.share["read_bytes"] for r in shares["rows"]) == pytest.approx(1)
    assert shares["rows"][0].name == "app-1"
    assert shares["rows"][0].share["read_bytes"] == pytest.approx(0.85, abs=0.01)
    assert shares["metered_low"] <= cw["metered_bytes"] <= shares["metered_high"]


def test_clients_that_began_pushing_in_the_range_are_set_beside_cloudwatch_from_then():
    """Agents installed (or ``make run`` started) within the range: CloudWatch counted the
    whole range, the clients only from their first push, their baseline; and CloudWatch's
    newest minutes are not in yet. Both sums start at that push and end at CloudWatch's newest
    minute, so the page compares like with like (and says from when to when)."""
    account = Account.objects.create(name="Demo", is_demo=True)
    region = Region.objects.create(account=account, code="eu-west-1")
    fs = FileSystem.objects.create(
        region=region, filesystem_id="fs-0123abcd", name="demo-web-assets"
    )
    key, phase = next((k, p) for n, k, _, p in DEMO_FLEET if n == fs.name)
    columns = {f.name for f in MetricMinute._meta.fields}
    first_push = T0 + timedelta(minutes=20)
    for minute in range(-60, 27):  # from an hour before the agents to 3 min before now
        at = T0 + timedelta(minutes=minute)
        values = minute_values(
            PROFILES[key], 0x0123ABCD % 997, int(at.timestamp()) // 60, phase, region="eu-west-1"
        )
        MetricMinute.objects.create(
            filesystem=fs, ts=at, **{k: v for k, v in values.items() if k in columns}
        )
    for minute in range(11):
        demo_clients.push_all(first_push + timedelta(minutes=minute))
    now = first_push + timedelta(minutes=10)
    for start in (T0 - timedelta(minutes=50), T0 + timedelta(minutes=5), first_push):
        shares = client_history.client_shares(fs, start, now, now)
        assert shares["start"] == first_push, start
        # CloudWatch's minutes settle later than the clients push: both sums end at its newest.
        assert shares["cloudwatch_until"] == now - timedelta(minutes=3)
        compared, cw = shares["compared"], shares["cloudwatch"]
        assert abs(compared["read_bytes"] - cw["data_read_bytes"]) <= len(demo_clients.CLIENTS)
        assert abs(compared["metadata_ops"] - cw["metadata_count"]) <= len(demo_clients.CLIENTS)
        assert shares["totals"]["read_bytes"] > compared["read_bytes"]
        assert shares["metered_low"] <= cw["metered_bytes"] <= shares["metered_high"]


def test_an_interval_that_ends_after_cloudwatchs_newest_minute_counts_its_part_before_it():
    """Two pushes ten minutes apart, CloudWatch's minutes to seven minutes after the first:
    the clients' sum set beside CloudWatch's is seven tenths of the interval's (evenly)."""
    account = Account.objects.create(name="Demo", is_demo=True)
    region = Region.objects.create(account=account, code="eu-west-1")
    fs = FileSystem.objects.create(
        region=region, filesystem_id="fs-0123abcd", name="demo-web-assets"
    )
    for minute in range(7):
        MetricMinute.objects.create(
            filesystem=fs, ts=T0 + timedelta(minutes=minute), data_read_bytes=1.0
        )
    demo_clients.push_all(T0)
    demo_clients.push_all(T0 + timedelta(minutes=10))
    now = T0 + timedelta(minutes=10)
    shares = client_history.client_shares(fs, T0, now, now)
    assert shares["cloudwatch_until"] == T0 + timedelta(minutes=7)
    totals, compared = shares["totals"], shares["compared"]
    assert totals["read_bytes"] > 0
    for name in ("read_bytes", "write_bytes", "read_ops", "metadata_ops"):
        assert abs(compared[name] - 0.7 * totals[name]) <= len(demo_clients.CLIENTS), name

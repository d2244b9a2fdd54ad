"""Discovery and collection against the moto server: pagination, batching, NextToken, the
settle window, back-fill, and one failing region."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.alerts.models import Cause
from apps.efs import collect, elasticfilesystem, tasks
from apps.efs.cloudwatch_plan import build_queries
from apps.efs.models import FileSystem, MetricMinute, RegionCollection
from apps.lib.cloudwatch import align
from tests.efs.conftest import boto, create_filesystems

pytestmark = pytest.mark.django_db


def discover(rc: RegionCollection) -> None:
    access = rc.region.account.access
    collect.save_discovery(
        rc, elasticfilesystem.describe_file_systems(rc.region.code, access), timezone.now()
    )


@pytest.fixture
def settled(aws, collection, settings) -> tuple[str, datetime, datetime]:
    """One file system, discovered, and minutes settled after 3 (the default): (its id, now,
    the end of the settled minutes)."""
    settings.VIGIL_EFS_SETTLE_MINUTES = 3
    (fs_id,) = create_filesystems(aws, 1)
    discover(collection)
    now = timezone.now()
    return fs_id, now, align(now - timedelta(minutes=3))


def test_it_lists_every_file_system_across_pages_with_names_and_modes(aws, collection):
    ids = create_filesystems(aws, 7)
    boto("efs", aws).create_file_system(
        CreationToken="prov",
        ThroughputMode="provisioned",
        ProvisionedThroughputInMibps=64,
        PerformanceMode="maxIO",
        Tags=[{"Key": "Name", "Value": "media"}],
    )

    found = elasticfilesystem.describe_file_systems("us-east-1", page_size=3)

    assert len(found) == 8 and {f.id for f in found} >= set(ids)
    media = next(f for f in found if f.name == "media")
    assert (media.throughput_mode, media.performance_mode, media.provisioned_mibps) == (
        "provisioned",
        "maxIO",
        64,
    )
    assert next(f for f in found if f.id == ids[0]).name == "fs-us-east-1-000"


def test_it_marks_a_file_system_that_vanished_as_deleted_and_keeps_its_history(aws, collection):
    ids = create_filesystems(aws, 3)
    discover(collection)
    gone = FileSystem.objects.get(filesystem_id=ids[1])
    MetricMinute.objects.create(filesystem=gone, ts=align(timezone.now()), total_bytes=5.0)
    boto("efs", aws).delete_file_system(FileSystemId=ids[1])

    discover(collection)

    gone.refresh_from_db()
    assert gone.deleted is not None
    assert gone.minutes.count() == 1
    assert FileSystem.objects.filter(deleted__isnull=True).count() == 2


def put_minutes(aws_url: str, fs_id: str, start: datetime, minutes: int) -> None:
    cw = boto("cloudwatch", aws_url)
    data = []
    for i in range(minutes):
        ts = start + timedelta(minutes=i)
        dims = [{"Name": "FileSystemId", "Value": fs_id}]
        data.append(
            {
                "MetricName": "DataReadIOBytes",
                "Dimensions": dims,
                "Timestamp": ts,
                "StatisticValues": {
                    "SampleCount": 600,
                    "Sum": 600 * 4096.0,
                    "Minimum": 4096.0,
                    "Maximum": 4096.0,
                },
            }
        )
        data.append(
            {
                "MetricName": "BurstCreditBalance",
                "Dimensions": dims,
                "Timestamp": ts,
                "Value": 1e12 - i * 1e9,
            }
        )
    for i in range(0, len(data), 20):
        cw.put_metric_data(Namespace="AWS/EFS", MetricData=data[i : i + 20])


def test_it_collects_a_settled_window_into_wide_rows_with_gaps_as_null(settled, aws, collection):
    fs_id, now, end = settled
    put_minutes(aws, fs_id, end - timedelta(minutes=5), 7)  # the last 2 are not settled yet
    fs = FileSystem.objects.get()
    FileSystem.objects.filter(pk=fs.pk).update(collected_until=end - timedelta(minutes=5))

    outcome = collect.collect_metrics(collection, now)

    rows = list(fs.minutes.order_by("ts"))
    assert [r.ts for r in rows] == [end - timedelta(minutes=5 - i) for i in range(5)]
    assert rows[0].data_read_count == 600 and rows[0].data_read_bytes == 600 * 4096.0
    assert rows[0].burst_credit_balance == 1e12
    assert rows[0].data_write_bytes is None and rows[0].percent_io_limit is None
    fs.refresh_from_db()
    assert fs.collected_until == end
    assert outcome.api_calls == 1


@pytest.mark.slow
def test_it_batches_queries_500_to_a_call_and_follows_next_token(
    aws, collection, responder, settings
):
    settings.VIGIL_EFS_LATE_DATA_MINUTES = 0  # the rows of the window alone
    create_filesystems(aws, 40, profile="web-assets")
    discover(collection)
    now = timezone.now()
    start = align(now - timedelta(minutes=3)) - timedelta(minutes=10)
    FileSystem.objects.update(collected_until=start)
    queries = len(build_queries(fs.ref() for fs in FileSystem.objects.all()))

    outcome = collect.collect_metrics(collection, now)

    assert queries > 500
    assert outcome.api_calls == math.ceil(queries / 500) == responder.calls["us-east-1"]
    minutes = MetricMinute.objects.count()
    assert minutes == 40 * 10
    assert MetricMinute.objects.filter(data_read_bytes__isnull=True).count() == 0

    # The same window again, 1,000 points a page: more calls, the same rows.
    FileSystem.objects.update(collected_until=start)
    responder.reset_counts()
    paged = collect.collect_metrics(collection, now, max_datapoints=1000)
    points = sum(1 for _ in range(queries)) * 10  # at most; StorageBytes come every 15 min
    assert paged.api_calls > outcome.api_calls
    assert paged.api_calls <= math.ceil(points / 1000) + 2
    assert MetricMinute.objects.count() == minutes


def test_it_backfills_a_gap_bounded_and_oldest_first(aws, collection, responder, settings):
    settings.VIGIL_EFS_BACKFILL_HOURS = 6
    create_filesystems(aws, 3, profile="draining")
    discover(collection)
    now = timezone.now()
    end = align(now - timedelta(minutes=3))
    FileSystem.objects.update(collected_until=end - timedelta(hours=30))

    collect.collect_metrics(collection, now)

    for fs in FileSystem.objects.all():
        stamps = list(fs.minutes.order_by("ts").values_list("ts", flat=True))
        assert stamps[0] == end - timedelta(hours=6) and stamps[-1] == end - timedelta(minutes=1)
        assert len(stamps) == 360
        assert fs.collected_until == end
        assert fs.backfill_from is None and fs.backfill_progress is None


def test_it_shows_back_fill_progress_while_it_runs():
    start = datetime(2026, 1, 1, tzinfo=UTC)
    fs = FileSystem(
        backfill_from=start,
        backfill_to=start + timedelta(hours=4),
        collected_until=start + timedelta(hours=1),
    )
    assert fs.backfill_progress == 0.25


def test_it_marks_a_region_refused_by_aws_as_failing_and_goes_on_with_the_others(
    aws, region, other_region, responder
):
    create_filesystems(aws, 2, profile="web-assets")
    create_filesystems(aws, 2, region="eu-west-1", profile="web-assets")
    message = "User: arn:aws:iam::123456789012:user/vigil is not authorized to perform: cloudwatch:GetMetricData"
    responder.faults.region_errors["eu-west-1"] = ("AccessDenied", message)
    ok = RegionCollection.objects.create(region=region)
    refused = RegionCollection.objects.create(region=other_region)

    tasks.collect_region(refused.pk, region="eu-west-1")
    tasks.collect_region(ok.pk, region="us-east-1")

    refused.refresh_from_db()
    ok.refresh_from_db()
    assert refused.last_error.startswith("AccessDenied") and message in refused.last_error
    assert ok.last_error == "" and ok.last_success is not None
    assert MetricMinute.objects.filter(filesystem__region=region).count() > 0
    assert MetricMinute.objects.filter(filesystem__region=other_region).count() == 0
    failing = FileSystem.objects.filter(region=other_region)
    assert all(message in fs.last_error for fs in failing)
    assert all(fs.status == "unknown" and message in fs.reason for fs in failing)

    # File systems that were ok go unknown for that one cause: one incident by cause.
    failing.update(status="ok")
    collect.judge_region(refused, timezone.now())
    (cause,) = Cause.objects.all()
    assert cause.label == f"AWS access to eu-west-1 ({other_region.account})"
    assert sorted(i.subject_label for i in cause.incidents.all()) == sorted(
        str(fs) for fs in failing
    )


@pytest.mark.slow  # botocore's adaptive back-off: seconds of real waiting, little CPU
def test_it_retries_throttled_calls_and_never_saves_zeros(aws, collection, responder, settings):
    settings.VIGIL_EFS_LATE_DATA_MINUTES = 0
    create_filesystems(aws, 2, profile="web-assets")
    discover(collection)
    now = timezone.now()
    FileSystem.objects.update(
        collected_until=align(now - timedelta(minutes=3)) - timedelta(minutes=5)
    )
    responder.faults.throttle_every = 2

    collect.collect_metrics(collection, now, max_datapoints=50)

    assert sum(responder.throttled.values()) >= 1
    assert MetricMinute.objects.count() == 10
    assert not MetricMinute.objects.filter(data_read_bytes=0).exists()


def test_it_collects_a_region_once_at_a_time(aws, collection):
    from apps.lib import leases

    assert leases.acquire(RegionCollection, collection.pk, timedelta(minutes=5))
    assert tasks.collect_region(collection.pk, region="us-east-1") is None


def test_it_queues_each_due_region_once_with_its_code_for_routing(
    region, other_region, monkeypatch
):
    queued = []
    monkeypatch.setattr(tasks.collect_region, "delay", lambda pk, region: queued.append(region))
    now = timezone.now()

    assert tasks.dispatch_due(now) == 2
    assert tasks.dispatch_due(now) == 0
    assert sorted(queued) == ["eu-west-1", "us-east-1"]


def test_a_minute_cloudwatch_delivers_late_fills_its_gap_in_the_same_calls(
    settled, aws, collection, settings, logged_in_client
):
    settings.VIGIL_EFS_LATE_DATA_MINUTES = 60
    fs_id, now, end = settled
    late = end - timedelta(minutes=5)
    put_minutes(aws, fs_id, end - timedelta(minutes=10), 5)  # the 5th minute has not come yet
    put_minutes(aws, fs_id, late + timedelta(minutes=1), 4)
    fs = FileSystem.objects.get()
    FileSystem.objects.filter(pk=fs.pk).update(collected_until=end - timedelta(minutes=10))

    first = collect.collect_metrics(collection, now)
    assert first.api_calls == 1 and first.late_rows == 0
    assert not fs.minutes.filter(ts=late).exists()  # a gap, not a zero
    collection.refresh_from_db()
    assert collection.late_look_from == end - timedelta(minutes=10)
    assert collection.next_late_look == now + timedelta(minutes=60)
    # CloudWatch delivers that minute after the settle delay; and one settled minute is
    # reported again with another value, which the late look must not rewrite.
    put_minutes(aws, fs_id, late, 1)
    boto("cloudwatch", aws).put_metric_data(
        Namespace="AWS/EFS",
        MetricData=[
            {
                "MetricName": "MeteredIOBytes",
                "Dimensions": [{"Name": "FileSystemId", "Value": fs_id}],
                "Timestamp": end - timedelta(minutes=1),
                "Value": 123.0,
            }
        ],
    )

    soon = collect.collect_metrics(collection, now + timedelta(minutes=5))
    assert soon.late_rows == 0  # most cycles ask only for their new minutes
    RegionCollection.objects.filter(pk=collection.pk).update(next_late_look=now)  # an hour on
    collection.refresh_from_db()
    second = collect.collect_metrics(collection, now + timedelta(minutes=10))

    assert second.api_calls == 1  # the late look rides in the cycle's one call (the floor)
    assert second.late_rows == 1
    row = fs.minutes.get(ts=late)
    assert row.data_read_count == 600 and row.burst_credit_balance == 1e12
    assert fs.minutes.get(ts=end - timedelta(minutes=1)).metered_bytes is None
    fs.refresh_from_db()
    assert fs.collected_until == end + timedelta(minutes=10)  # never moved back
    collection.refresh_from_db()
    assert collection.late_look_from == end + timedelta(minutes=5)  # the next look starts here
    # ... and the chart draws it.
    page = logged_in_client.get(reverse("efs:filesystem_detail", args=[fs.pk]) + "?range=3h")
    ops = page.context["charts"]["ops"]
    at = ops["x"].index(int(late.timestamp()))
    assert ops["series"][0]["values"][at - 5 : at + 5] == [10.0] * 10


def test_without_the_late_look_a_late_minute_stays_a_gap(settled, aws, collection, settings):
    settings.VIGIL_EFS_LATE_DATA_MINUTES = 0
    fs_id, now, end = settled
    late = end - timedelta(minutes=2)
    FileSystem.objects.update(collected_until=end - timedelta(minutes=5))
    collect.collect_metrics(collection, now)
    put_minutes(aws, fs_id, late, 1)
    again = collect.collect_metrics(collection, now + timedelta(minutes=65))
    assert again.late_rows == 0
    assert not MetricMinute.objects.filter(ts=late).exists()


def test_it_drops_and_counts_nan_and_negative_values_never_storing_them(
    settled, aws, collection, caplog
):
    fs_id, now, end = settled
    start = end - timedelta(minutes=4)
    dims = [{"Name": "FileSystemId", "Value": fs_id}]
    nan = {"SampleCount": 1.0, "Sum": math.nan, "Minimum": math.nan, "Maximum": math.nan}
    planted = [  # moto refuses a NaN Value, not NaN statistics, nor an infinite Value
        {"MetricName": "PercentIOLimit", "Timestamp": start, "StatisticValues": nan},
        {"MetricName": "PercentIOLimit", "Timestamp": start + timedelta(minutes=1), "Value": 42.0},
        {
            "MetricName": "PercentIOLimit",
            "Timestamp": start + timedelta(minutes=2),
            "Value": math.inf,
        },
        {
            "MetricName": "BurstCreditBalance",
            "Timestamp": start + timedelta(minutes=1),
            "Value": -5e9,
        },
        {
            "MetricName": "BurstCreditBalance",
            "Timestamp": start + timedelta(minutes=2),
            "Value": 7e11,
        },
    ]
    boto("cloudwatch", aws).put_metric_data(
        Namespace="AWS/EFS", MetricData=[{**metric, "Dimensions": dims} for metric in planted]
    )
    fs = FileSystem.objects.get()
    FileSystem.objects.filter(pk=fs.pk).update(collected_until=start)

    result = tasks.collect_region(collection.pk)

    rows = {r.ts: r for r in fs.minutes.all()}
    assert start not in rows  # only a NaN that minute: a gap, not NaN and not zero
    assert rows[start + timedelta(minutes=1)].percent_io_limit == 42.0
    assert rows[start + timedelta(minutes=1)].burst_credit_balance is None
    assert rows[start + timedelta(minutes=2)].burst_credit_balance == 7e11
    assert rows[start + timedelta(minutes=2)].percent_io_limit is None
    assert result["dropped"] == 3
    collection.refresh_from_db()
    assert collection.dropped_values == 3
    assert collection.dropped_note == (
        f"{fs_id} BurstCreditBalance Minimum: 1 negative; "
        f"{fs_id} PercentIOLimit Maximum: 2 not a number"
    )
    assert f"{fs_id}: dropped 2 not a number value(s) of PercentIOLimit Maximum" in caplog.text
    assert f"{fs_id}: dropped 1 negative value(s) of BurstCreditBalance Minimum" in caplog.text
    assert "NaN" not in json.dumps(FileSystem.objects.get().figures)  # nor in the figures


def test_discovery_keeps_the_mount_targets_addresses_for_clients_that_mount_by_address(
    aws, collection
):
    (fs_id,) = create_filesystems(aws, 1)
    ec2 = boto("ec2", aws)
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.9.1.0/24")["Subnet"]["SubnetId"]
    boto("efs", aws).create_mount_target(FileSystemId=fs_id, SubnetId=subnet, IpAddress="10.9.1.25")
    discover(collection)
    targets = elasticfilesystem.describe_mount_targets("us-east-1", [fs_id])
    assert targets == {fs_id: ["10.9.1.25"]}
    collect.save_mount_targets(collection, targets)
    assert FileSystem.objects.get(filesystem_id=fs_id).mount_target_addresses == ["10.9.1.25"]
    collect.save_mount_targets(collection, None)  # AWS would not say: kept as they were
    assert FileSystem.objects.get(filesystem_id=fs_id).mount_target_addresses == ["10.9.1.25"]

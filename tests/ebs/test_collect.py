"""Discovery, collection and judgement against the moto server: volumes of every type attached
to instances, with CloudWatch minutes put as AWS publishes them; the cycle's calls counted
against the floor (ceil(queries / 500) per window piece)."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.ebs import collect, demo_cloudwatch, ec2, tasks
from apps.ebs.cloudwatch_plan import WINDOW_STEP_S, build_queries
from apps.ebs.models import Instance, Volume, VolumeMinute
from apps.lib.cloudwatch import align
from tests.ebs.conftest import boto, put, run_instance, volume

pytestmark = pytest.mark.django_db


@pytest.mark.slow
def test_it_lists_volumes_across_pages_with_their_attachments_and_instances(aws, collection):
    db = run_instance(aws, "db-1", "10.0.1.10")
    data = volume(aws, "gp3", 200, "db-1-data", db, Iops=4000, Throughput=250)
    spare = volume(aws, "st1", 500, "spare")

    found = {v.id: v for v in ec2.describe_volumes("us-east-1", page_size=5)}
    instances = ec2.describe_instances("us-east-1", [db, "i-0123456789abcdef0"])

    assert found[data].volume_type == "gp3" and found[data].iops == 4000
    assert found[data].throughput_mibps == 250 and found[data].name == "db-1-data"
    assert [(a.instance_id, a.device) for a in found[data].attachments] == [(db, "/dev/sdf")]
    assert found[spare].attachments == () and found[spare].size_gib == 500
    assert len(found) == 3  # and the root volume moto gives the instance
    assert [(i.id, i.name, i.instance_type) for i in instances] == [(db, "db-1", "m5.large")]
    assert instances[0].private_ips == ("10.0.1.10",)


def test_it_marks_a_volume_that_vanished_deleted_and_keeps_its_history(aws, collection):
    gone = volume(aws, "gp2", 20, "scratch")
    now = timezone.now()
    collect.discover(collection, now)
    row = Volume.objects.get(volume_id=gone)
    VolumeMinute.objects.create(volume=row, ts=align(now), read_ops=5.0)
    boto("ec2", aws).delete_volume(VolumeId=gone)

    collect.discover(collection, now)

    row.refresh_from_db()
    assert row.deleted is not None and row.minutes.count() == 1


def _ramp(start: float, end: float, n: int) -> list[float]:
    return [start + (end - start) * i / (n - 1) for i in range(n)]


@pytest.fixture
def fleet(aws, collection, settings):
    """Volumes of every type on three instances, with an hour of settled minutes each."""
    settings.VIGIL_EBS_SETTLE_MINUTES = 3
    now = timezone.now()
    end = align(now - timedelta(minutes=3), WINDOW_STEP_S)
    start = end - timedelta(hours=1)
    n = 60
    db = run_instance(aws, "db-1", "10.0.1.10")
    bw = run_instance(aws, "bw-1", "10.0.1.11", "c5.large")
    ids = {
        "draining": volume(aws, "gp2", 50, "gp2-draining", db, "/dev/sdf"),
        "st1": volume(aws, "st1", 500, "st1-baseline", db, "/dev/sdg"),
        "gp3": volume(aws, "gp3", 200, "gp3-at-limit", db, "/dev/sdh", Iops=3000),
        "io1": volume(aws, "io1", 100, "io1", db, "/dev/sdi", Iops=1000),
        "io2": volume(aws, "io2", 100, "io2", db, "/dev/sdj", Iops=2000),
        "sc1": volume(aws, "sc1", 1000, "sc1", db, "/dev/sdk"),
        "standard": volume(aws, "standard", 10, "magnetic", db, "/dev/sdl"),
        "impaired": volume(aws, "gp2", 100, "gp2-impaired", db, "/dev/sdm"),
        "on-bw": volume(aws, "gp3", 100, "on-bw", bw, "/dev/sdf"),
        "detached": volume(aws, "gp2", 30, "detached"),
    }
    minute = {
        "VolumeReadOps": [600.0] * n,
        "VolumeWriteOps": [300.0] * n,
        "VolumeReadBytes": [600 * 16384.0] * n,
        "VolumeWriteBytes": [300 * 16384.0] * n,
        "VolumeTotalReadTime": [0.3] * n,
        "VolumeTotalWriteTime": [0.3] * n,
        "VolumeIdleTime": [50.0] * n,
        "VolumeQueueLength": [0.5] * n,
    }
    for key, vid in ids.items():
        if key == "detached":
            continue
        values = dict(minute)
        if key == "draining":  # 100 % an hour ago, 40 % now: out in ~40 minutes
            values |= {"BurstBalance": _ramp(100.0, 41.0, n), "VolumeReadOps": [162000.0] * n}
        elif key in ("st1", "sc1", "impaired"):
            values["BurstBalance"] = [100.0] * n
        if key == "st1":  # reading at its 19.5 MiB/s baseline, 1 MiB requests
            values |= {
                "VolumeReadOps": [1170.0] * n,
                "VolumeReadBytes": [1170 * 1048576.0] * n,
                "VolumeWriteOps": [0.0] * n,
                "VolumeWriteBytes": [0.0] * n,
            }
        if key == "gp3":  # 3,000 IOPS, the provisioned limit, asking for more all along
            values |= {"VolumeReadOps": [150000.0] * n, "VolumeWriteOps": [30000.0] * n}
        if key in ("io1", "io2"):
            values |= {
                "VolumeThroughputPercentage": [100.0] * n,
                "VolumeConsumedReadWriteOps": [900.0] * n,
            }
        put(aws, "AWS/EBS", {"VolumeId": vid}, values, start)
        instance = bw if key == "on-bw" else db
        checks = {"VolumeIOPSExceededCheck": [1.0 if key == "gp3" else 0.0] * n}
        checks["VolumeStalledIOCheck"] = [0.0] * (n - 2) + (
            [1.0, 1.0] if key == "impaired" else [0.0, 0.0]
        )
        put(aws, "AWS/EBS", {"VolumeId": vid, "InstanceId": instance}, checks, start)
    # The c5.large's EBS I/O burst bucket: 100 % an hour ago, 12 % now, every 5 minutes.
    put(
        aws,
        "AWS/EC2",
        {"InstanceId": bw},
        {"EBSIOBalance%": _ramp(100.0, 12.0, 12), "EBSByteBalance%": [100.0] * 12},
        start,
        step=timedelta(minutes=5),
    )
    return ids, now, end


@pytest.mark.slow
def test_it_collects_every_type_in_the_fewest_calls_and_judges_each(fleet, collection):
    ids, now, end = fleet

    result = collect.run_cycle(collection.pk, now)

    collection.refresh_from_db()
    assert result["api_calls"] == collection.api_calls == collection.floor_calls == 1
    vols = {v.volume_id: v for v in Volume.objects.select_related("instance")}
    queries = build_queries(
        [v.ref(v.instance.instance_id) for v in vols.values() if v.instance],
        [i.ref() for i in Instance.objects.all()],
    )
    assert result["queries"] == len(queries) and math.ceil(len(queries) / 500) == 1
    draining = vols[ids["draining"]]
    rows = list(draining.minutes.order_by("ts"))
    assert len(rows) == 60 and rows[-1].ts == end - timedelta(minutes=1)
    assert rows[0].burst_balance == 100.0 and rows[0].throughput_pct is None  # gp2: not asked
    assert draining.collected_until == end

    def status(key):
        v = vols[ids[key]]
        return v.status, v.reason

    assert status("draining")[0] == "critical"
    assert status("draining")[1].startswith("gp2 burst credits run out in ~")
    # 41 % at the last settled minute, 1 % a minute: out 41 minutes after it.
    left = 41 - (now - (end - timedelta(minutes=1))).total_seconds() / 60
    assert draining.figures["hours_to_exhaustion"] * 60 == pytest.approx(left, abs=0.5)
    assert status("st1") == ("ok", status("st1")[1]) and "not draining" in status("st1")[1]
    assert status("gp3")[0] == "warning" and "VolumeIOPSExceededCheck" in status("gp3")[1]
    assert "IOPS above 90 % of its provisioned 3,000 IOPS" in status("gp3")[1]
    assert status("impaired")[0] == "critical" and "impaired" in status("impaired")[1]
    assert status("on-bw")[0] == "critical"
    assert "instance bw-1" in status("on-bw")[1] and "EBSIOBalance%" in status("on-bw")[1]
    assert status("detached") == (
        "ok",
        "not attached: CloudWatch reports nothing for a detached volume",
    )
    for key in ("io1", "io2", "sc1", "standard"):
        assert status(key)[0] == "ok", status(key)
    assert vols[ids["io1"]].figures["throughput_pct"] == 100.0
    assert vols[ids["gp3"]].figures["iops"] == pytest.approx(3000.0)
    assert vols[ids["st1"]].figures["mibps"] == pytest.approx(19.5)
    bw = Instance.objects.get(name="bw-1")
    assert bw.figures["instance_io_credit_state"] == "draining"

    # Nothing is asked again of a window already collected, and missing stays missing.
    assert collect.run_cycle(collection.pk, now)["api_calls"] == 0
    assert not VolumeMinute.objects.filter(volume__volume_id=ids["detached"]).exists()
    assert not vols[ids["standard"]].minutes.filter(burst_balance__isnull=False).exists()


@pytest.fixture
def responder(aws):
    installed = demo_cloudwatch.install(demo_cloudwatch.EbsResponder())
    yield installed
    demo_cloudwatch.uninstall()


@pytest.mark.slow
def test_it_batches_queries_500_to_a_call_and_back_fills_in_pieces(
    aws, collection, responder, settings
):
    settings.VIGIL_EBS_BACKFILL_HOURS = 6
    tags = {demo_cloudwatch.PROFILE_TAG: "gp2-steady"}
    instance = run_instance(aws, "big", "10.0.3.1")
    boto("ec2", aws).create_tags(
        Resources=[instance], Tags=[{"Key": demo_cloudwatch.PROFILE_TAG, "Value": "steady"}]
    )
    for i in range(45):
        volume(
            aws,
            "gp2",
            50,
            f"v{i}",
            instance,
            f"/dev/xvd{chr(98 + i // 26)}{chr(97 + i % 26)}",
            tags=tags,
        )
    now = timezone.now()
    collect.discover(collection, now)
    end = align(now - timedelta(minutes=3), WINDOW_STEP_S)
    Volume.objects.update(collected_until=end - timedelta(hours=30))

    outcome = collect.collect_metrics(collection, now)

    assert outcome.queries > 500
    # 6 h of 60 s queries: 2 calls a piece of 200 minutes, 2 pieces.
    assert outcome.api_calls == outcome.floor_calls == math.ceil(outcome.queries / 500) * 2
    assert responder.calls["us-east-1"] == outcome.api_calls
    tagged = Volume.objects.filter(name__startswith="v")
    assert all(v.collected_until == end for v in tagged)
    assert tagged.first().minutes.count() == 360


def test_it_keeps_a_region_refused_by_aws_as_its_error(failing_aws, collection):
    failing_aws("UnauthorizedOperation", 403)
    result = tasks.collect_region(collection.pk, region="us-east-1")
    collection.refresh_from_db()
    assert result["api_calls"] == 0 and collection.last_error.startswith("UnauthorizedOperation")

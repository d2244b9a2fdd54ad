"""The synthetic fleet follows the credit model, and the stand-in enforces AWS's limits."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from botocore.exceptions import ClientError

from apps.efs.cloudwatch_plan import FileSystemRef, build_queries
from apps.efs.demo_workloads import DEMO_FLEET, PROFILES, minute_values
from apps.efs.metrics import TIB
from tests.efs.conftest import boto, create_filesystems

DAY0 = 20_000 * 1440  # a minute index at the start of a day


def test_it_drains_the_draining_profile_to_zero_in_about_20_hours_then_caps_at_baseline():
    p = PROFILES["draining"]
    balances = [minute_values(p, 1, DAY0 + m)["burst_credit_balance"] for m in range(0, 1440, 10)]
    assert balances[0] == pytest.approx(2.1 * TIB, rel=0.01)
    first_empty = next(i * 10 for i, b in enumerate(balances) if b == 0.0)
    assert 18 * 60 <= first_empty <= 22 * 60
    empty = minute_values(p, 1, DAY0 + 23 * 60)
    # Capped: metered throughput at the 200 GiB baseline (9.8 MiB/s), permitted = baseline.
    assert empty["permitted_throughput"] == pytest.approx(200 * 50 * 1024)
    assert empty["metered_bytes"] / 60 == pytest.approx(200 * 50 * 1024, rel=0.1)


def test_it_keeps_the_io_bound_profile_near_todays_35000_reads_and_7000_writes():
    p = PROFILES["io-bound"]
    for m in range(0, 120, 7):
        v = minute_values(p, 5, DAY0 + m)
        assert 90 < v["percent_io_limit"] <= 100
        reads = (v["data_read_count"] + v["metadata_read_count"]) / 60
        writes = (v["data_write_count"] + v["metadata_write_count"]) / 60
        assert 29_000 < reads < 36_000 and 400 < writes < 600
        # Metered: 4 KiB data requests count as 32 KiB, metadata as 4 KiB, reads at a third;
        # under the 100 MiB/s baseline of 2 TiB, so its credits last.
        assert 60 < v["metered_bytes"] / 60 / 2**20 < 85
        assert v["burst_credit_balance"] > 0


def test_it_counts_the_metering_minimums_in_total_io_bytes_only():
    # [METRICS]: TotalIOBytes "includes minimums"; the per-kind metrics are actual bytes.
    v = minute_values(PROFILES["io-bound"], 5, DAY0)
    assert v["data_read_bytes"] == pytest.approx(v["data_read_count"] * 4096, rel=0.01)
    assert v["total_bytes"] == pytest.approx(
        (v["data_read_count"] + v["data_write_count"]) * 32768
        + (v["metadata_read_count"] + v["metadata_write_count"]) * 4096,
        rel=0.01,
    )
    assert v["metadata_count"] == v["metadata_read_count"] + v["metadata_write_count"]


def test_a_replicated_profile_syncs_every_5_minutes_and_stalls_at_2_utc():
    p = PROFILES["draining"]
    # 01:07 of its day: the last sync was at 01:05, 2 minutes ago.
    assert minute_values(p, 1, DAY0 + 67)["time_since_last_sync"] == 120
    # 02:40, in the stall: the last sync was at 01:55, 45 minutes ago.
    assert minute_values(p, 1, DAY0 + 160)["time_since_last_sync"] == 45 * 60
    assert "time_since_last_sync" not in minute_values(PROFILES["elastic"], 1, DAY0)


def test_it_gives_elastic_and_provisioned_file_systems_no_credit_balance():
    assert "burst_credit_balance" not in minute_values(PROFILES["elastic"], 1, DAY0)
    # Elastic's PermittedThroughput is its Region's documented write limit [METRICS].
    fast = minute_values(PROFILES["elastic"], 1, DAY0, region="us-east-1")
    assert fast["permitted_throughput"] == 5 * 2**30
    elsewhere = minute_values(PROFILES["elastic"], 1, DAY0, region="ap-east-1")
    assert elsewhere["permitted_throughput"] == 2**30
    prov = minute_values(PROFILES["provisioned"], 1, DAY0)
    assert prov["permitted_throughput"] == 64 * 2**20
    assert "percent_io_limit" not in minute_values(PROFILES["analytics"], 1, DAY0)  # Max I/O


def test_it_puts_a_dozen_demo_file_systems_in_six_regions():
    assert len(DEMO_FLEET) == 12 and len({r for _, _, r, _ in DEMO_FLEET}) == 6


def params(fs_ids, minutes, **extra):
    end = datetime.fromtimestamp(time.time() // 60 * 60 - 120, UTC)
    queries = build_queries(FileSystemRef(i) for i in fs_ids)
    return {
        "MetricDataQueries": queries,
        "StartTime": end - timedelta(minutes=minutes),
        "EndTime": end,
        **extra,
    }


def test_the_stand_in_refuses_more_than_500_queries(aws, responder):
    ids = create_filesystems(aws, 32, profile="web-assets")
    cw = boto("cloudwatch", aws)
    with pytest.raises(ClientError) as refused:
        cw.get_metric_data(**params(ids, 5))
    assert "500" in str(refused.value)


def test_the_stand_in_pages_by_max_datapoints_with_next_token(aws, responder):
    ids = create_filesystems(aws, 2, profile="web-assets")
    cw = boto("cloudwatch", aws)
    first = cw.get_metric_data(**params(ids, 10, MaxDatapoints=50))
    assert sum(len(r["Values"]) for r in first["MetricDataResults"]) == 50
    total, token, pages = 50, first.get("NextToken"), 1
    while token:
        page = cw.get_metric_data(**params(ids, 10, MaxDatapoints=50, NextToken=token))
        total += sum(len(r["Values"]) for r in page["MetricDataResults"])
        token, pages = page.get("NextToken"), pages + 1
    whole = cw.get_metric_data(**params(ids, 10))
    assert "NextToken" not in whole
    assert total == sum(len(r["Values"]) for r in whole["MetricDataResults"])
    assert pages == -(-total // 50)


def test_the_stand_in_rounds_start_time_down_to_the_period(aws, responder):
    ids = create_filesystems(aws, 1, profile="web-assets")
    p = params(ids, 5)
    p["StartTime"] += timedelta(seconds=20)
    got = boto("cloudwatch", aws).get_metric_data(**p)
    stamps = got["MetricDataResults"][0]["Timestamps"]
    assert stamps and all(t.second == 0 for t in stamps)
    assert len(stamps) == 5


def test_the_stand_in_leaves_other_metrics_to_moto(aws, responder):
    cw = boto("cloudwatch", aws)
    now = datetime.fromtimestamp(time.time() // 60 * 60 - 120, UTC)
    cw.put_metric_data(
        Namespace="AWS/EFS",
        MetricData=[
            {
                "MetricName": "PercentIOLimit",
                "Value": 7.0,
                "Timestamp": now,
                "Dimensions": [{"Name": "FileSystemId", "Value": "fs-00000001"}],
            }
        ],
    )
    got = cw.get_metric_data(**params(["fs-00000001"], 1, EndTime=now + timedelta(minutes=1)))
    values = {r["Id"]: r["Values"] for r in got["MetricDataResults"]}
    assert values["fs_00000001__iolimit_max"] == [7.0]
    assert responder.calls == {}

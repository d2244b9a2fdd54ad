"""Headroom against the documented per-file-system limits (apps/efs/limits.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.efs.documented import LIMITS, mode_limits
from apps.efs.limits import (
    DOCUMENTED,
    IMPLIED,
    Headroom,
    headroom,
    headroom_figures,
    headroom_from_figures,
)
from apps.efs.metrics import MIB, Sample

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
GIB_S = 1024


def test_it_holds_the_documented_limits_of_each_type_throughput_mode_and_region():
    elastic = mode_limits(LIMITS, "regional", "elastic", "ap-east-1")  # not a fast Region
    assert (elastic.read_iops, elastic.write_iops) == (250_000, 50_000)
    assert (elastic.read_mibps, elastic.write_mibps) == (20 * GIB_S, 1 * GIB_S)
    fast = mode_limits(LIMITS, "regional", "elastic", "us-east-1")
    assert (fast.read_mibps, fast.write_mibps) == (60 * GIB_S, 5 * GIB_S)
    provisioned = mode_limits(LIMITS, "regional", "provisioned", "eu-west-1")
    assert (provisioned.read_iops, provisioned.write_iops) == (55_000, 25_000)
    assert provisioned.read_mibps == 10 * GIB_S
    assert provisioned.write_mibps == 3.33 * GIB_S
    bursting = mode_limits(LIMITS, "regional", "bursting")
    assert (bursting.read_iops, bursting.write_iops) == (35_000, 7_000)
    # One Zone: 35,000/7,000 in every mode, Elastic and Provisioned 3/1 GiB/s everywhere,
    # Bursting as a Regional bursting file system (5/3 GiB/s in us-east-1).
    one_zone = mode_limits(LIMITS, "one_zone", "elastic", "us-east-1")
    assert (one_zone.read_iops, one_zone.write_iops) == (35_000, 7_000)
    assert (one_zone.read_mibps, one_zone.write_mibps) == (3 * GIB_S, 1 * GIB_S)
    assert mode_limits(LIMITS, "one_zone", "bursting", "us-east-1").read_mibps == 5 * GIB_S
    assert all(
        f.read_on == "2026-11-26" and f.source.startswith("https://") for f in LIMITS.values()
    )


def test_general_purpose_says_ops_against_the_limit_percent_io_limit_implies():
    # The seed: 2,880 ops/s at 84 % of the I/O limit.
    seed = Sample(T0, total_count=2880 * 60, percent_io_limit=84.0, data_read_count=2880 * 60)
    (ops,) = headroom(seed, "generalPurpose", "bursting")
    assert ops.text == "2,880 of ~3,430 ops/s"
    assert ops.limit == pytest.approx(2880 / 0.84)
    assert ops.pct == pytest.approx(84.0)
    assert ops.basis == IMPLIED


def test_elastic_and_max_io_say_throughput_and_operations_against_the_documented_limits():
    minute = Sample(
        T0,
        total_count=30_000 * 60,
        data_read_bytes=120 * MIB * 60,
        data_read_count=20_000 * 60,
        data_write_bytes=1536 * MIB * 60,
        data_write_count=9_000 * 60,
        metadata_count=1_000 * 60,
    )
    room = headroom(minute, "generalPurpose", "elastic", region="ap-east-1")
    texts = {h.key: h.text for h in room}
    # 120 / 20,480 = 0.59 % of the read limit, 1,536 / 1,024 = 150 % of the write limit: one
    # combined budget, 150.59 % of it. Metadata is not split here: shown on its own.
    assert texts == {
        "read_mibps": "120 MiB/s of 20 GiB/s",
        "write_mibps": "1.5 of 1 GiB/s",
        "combined_pct": "151 of 100 %",
        "read_iops": "20,000 of 250,000 ops/s",
        "write_iops": "9,000 of 50,000 ops/s",
        "metadata_iops": "1,000 ops/s (not split into reads and writes: no limit applies)",
    }
    assert {h.basis for h in room} == {DOCUMENTED}
    max_io = {h.key: h.text for h in headroom(minute, "maxIO", "provisioned", region="ap-east-1")}
    assert max_io["read_mibps"] == "120 MiB/s of 3 GiB/s"
    assert max_io["read_iops"] == "20,000 ops/s (no documented limit)"


def test_two_60_percent_bars_are_120_percent_of_the_one_combined_limit():
    # Regional Elastic in us-east-1: 60 GiB/s read, 5 GiB/s written. 36 GiB/s read is 60 % of
    # the read limit and 3 GiB/s written 60 % of the write limit: 120 % of the one budget.
    minute = Sample(
        T0,
        total_count=60,
        data_read_bytes=36 * GIB_S * MIB * 60,
        data_write_bytes=3 * GIB_S * MIB * 60,
    )
    room = {h.key: h for h in headroom(minute, "generalPurpose", "elastic", region="us-east-1")}
    assert room["read_mibps"].pct == pytest.approx(60)
    assert room["write_mibps"].pct == pytest.approx(60)
    assert room["combined_pct"].used == pytest.approx(120)


def test_metadata_reads_count_as_reads_and_metadata_writes_as_writes():
    minute = Sample(
        T0,
        total_count=(100 + 50 + 4_000 + 3_000) * 60,
        data_read_count=100 * 60,
        data_write_count=50 * 60,
        metadata_count=7_000 * 60,
        metadata_read_count=4_000 * 60,
        metadata_write_count=3_000 * 60,
    )
    room = {
        h.key: h for h in headroom(minute, "generalPurpose", "elastic", file_system_type="one_zone")
    }
    # One Zone: 35,000 reads and 7,000 writes a second.
    assert (room["read_iops"].used, room["read_iops"].limit) == (4_100, 35_000)
    assert (room["write_iops"].used, room["write_iops"].limit) == (3_050, 7_000)
    assert "metadata_iops" not in room


def test_an_elastic_file_system_with_percent_io_limit_gets_both():
    minute = Sample(
        T0, total_count=600, percent_io_limit=1.0, data_read_bytes=0.0, data_read_count=600
    )
    keys = [h.key for h in headroom(minute, "generalPurpose", "elastic")]
    assert keys == ["ops", "read_mibps"]


def test_no_operations_no_headroom_never_zero():
    assert headroom(None, "generalPurpose", "bursting") == []
    assert headroom(Sample(T0, percent_io_limit=50.0), "generalPurpose", "bursting") == []


def test_it_round_trips_through_the_stored_figures():
    items = [Headroom("ops", "I/O operations", 2880.0, 3428.6, "ops/s", True)]
    figures = headroom_figures(items)
    assert figures == {"headroom_ops": 2880.0, "headroom_ops_limit": 3428.6}
    assert headroom_from_figures(figures) == items
    assert headroom_from_figures({"headroom_ops": None}) == []

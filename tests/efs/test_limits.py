"""Headroom against the documented per-file-system limits (apps/efs/limits.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.efs.limits import LIMITS, Headroom, headroom, headroom_figures, headroom_from_figures
from apps.efs.metrics import MIB, Sample

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def test_it_holds_the_documented_limits_of_each_throughput_mode():
    assert LIMITS["elastic"].read_iops == 250_000 and LIMITS["elastic"].write_iops == 50_000
    assert LIMITS["elastic"].read_mibps == 20 * 1024 and LIMITS["elastic"].write_mibps == 1024
    assert (LIMITS["provisioned"].read_iops, LIMITS["provisioned"].write_iops) == (55_000, 25_000)
    assert (LIMITS["bursting"].read_iops, LIMITS["bursting"].write_iops) == (35_000, 7_000)


def test_general_purpose_says_ops_against_the_limit_percent_io_limit_implies():
    # The seed: 2,880 ops/s at 84 % of the I/O limit.
    seed = Sample(T0, total_count=2880 * 60, percent_io_limit=84.0, data_read_count=2880 * 60)
    (ops,) = headroom(seed, "generalPurpose", "bursting")
    assert ops.text == "2,880 of ~3,430 ops/s"
    assert ops.limit == pytest.approx(2880 / 0.84)
    assert ops.pct == pytest.approx(84.0)


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
    texts = {h.key: h.text for h in headroom(minute, "generalPurpose", "elastic")}
    assert texts == {
        "read_mibps": "120 MiB/s of 20 GiB/s",
        "write_mibps": "1.5 of 1 GiB/s",
        "read_iops": "20,000 of 250,000 ops/s",
        "write_iops": "10,000 of 50,000 ops/s",
    }
    max_io = {h.key: h.text for h in headroom(minute, "maxIO", "provisioned")}
    assert max_io["read_mibps"] == "120 MiB/s of 3 GiB/s"
    assert max_io["read_iops"] == "20,000 ops/s (no documented limit)"


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

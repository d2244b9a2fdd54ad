"""The documented performance of each volume type (apps/ebs/limits.py) and which metrics each
publishes."""

from __future__ import annotations

import pytest

from apps.ebs.limits import (
    VOLUME_METRICS,
    gp2_burst_seconds,
    instance_metrics,
    performance,
    volume_metrics,
)


@pytest.mark.parametrize(
    ("size", "baseline", "burst", "mibps"),
    [(1, 100, 3000, 128), (50, 150, 3000, 128), (500, 1500, 3000, 250), (1000, 3000, None, 250),
     (6000, 16000, None, 250)],
)  # fmt: skip
def test_it_gives_gp2_three_iops_a_gib_and_a_burst_below_a_tib(size, baseline, burst, mibps):
    p = performance("gp2", size)
    assert (p.baseline_iops, p.burst_iops, p.max_mibps) == (baseline, burst, mibps)
    assert p.bursts is (burst is not None)


def test_it_knows_how_long_a_full_gp2_bucket_lasts():
    assert gp2_burst_seconds(100) == pytest.approx(2000)  # the AWS table: 100 GiB, 2,000 s
    assert gp2_burst_seconds(1) == pytest.approx(5_400_000 / 2900)
    assert gp2_burst_seconds(1000) is None


def test_it_reads_provisioned_types_as_provisioned_and_hdd_per_tib():
    assert (
        performance("gp3", 100).baseline_iops == 3000 and performance("gp3", 100).max_mibps == 125
    )
    gp3 = performance("gp3", 100, iops=6000, mibps=500)
    assert (gp3.baseline_iops, gp3.max_mibps, gp3.bursts) == (6000, 500, False)
    assert performance("io1", 100, iops=1000).max_mibps == 250  # 256 KiB an operation
    assert performance("io2", 100, iops=64000).max_mibps == 4000
    st1 = performance("st1", 500)
    assert st1.baseline_mibps == pytest.approx(19.53, abs=0.01) and st1.bursts
    assert performance("st1", 16384).baseline_mibps == 500  # the per-volume ceiling
    assert performance("sc1", 1024).burst_mibps == 80


def test_it_asks_each_type_only_the_metrics_it_publishes():
    gp2 = {m.metric for m in volume_metrics("gp2")}
    assert "BurstBalance" in gp2 and "VolumeThroughputPercentage" not in gp2
    io1 = {m.metric for m in volume_metrics("io1")}
    assert {"VolumeThroughputPercentage", "VolumeConsumedReadWriteOps"} <= io1
    assert "BurstBalance" not in io1
    standard = {m.metric for m in volume_metrics("standard")}
    assert "VolumeIOPSExceededCheck" not in standard and "VolumeStalledIOCheck" in standard
    assert all(m.source.startswith("https://docs.aws.amazon.com/") for m in VOLUME_METRICS)


def test_it_asks_the_ebs_balances_only_of_sizes_that_publish_them():
    small = {m.metric for m in instance_metrics("c5.4xlarge")}
    big = {m.metric for m in instance_metrics("c5.9xlarge")}
    assert "EBSIOBalance%" in small and "EBSIOBalance%" not in big
    assert "InstanceEBSIOPSExceededCheck" in big

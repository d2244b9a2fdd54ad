"""A volume's status from its minutes (apps/ebs/verdict.py), pure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from apps.ebs.metrics import InstanceSample, VolumeSample
from apps.ebs.verdict import InstanceFacts, VolumeFacts, volume_verdict
from apps.lib.status import Status

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


def minutes(n: int = 60, end: datetime = NOW, **series) -> list[VolumeSample]:
    """``n`` minutes up to ``end``; each keyword a constant or a list of values."""
    out = []
    for i in range(n):
        values = {k: (v[i] if isinstance(v, list) else v) for k, v in series.items()}
        out.append(VolumeSample(end - timedelta(minutes=n - i), 60, **values))
    return out


BUSY = {"read_ops": 6000.0, "write_ops": 3000.0, "read_bytes": 6000 * 16384.0,
        "write_bytes": 3000 * 16384.0, "read_time": 3.0, "write_time": 3.0}  # fmt: skip


def test_it_forecasts_a_draining_gp2_volume_and_goes_critical_within_the_hour():
    samples = minutes(burst_balance=[100.0 - i for i in range(60)], **BUSY)
    verdict = volume_verdict(samples, NOW, VolumeFacts("gp2", 50))
    assert verdict.status is Status.CRITICAL
    assert verdict.reason == "gp2 burst credits run out in ~40 min at the last 1 h's drain rate"
    assert verdict.figures["hours_to_exhaustion"] == pytest.approx(40 / 60, abs=0.02)
    assert verdict.figures["iops"] == pytest.approx(150.0)


def test_it_warns_of_a_slower_drain_and_calls_an_empty_bucket_held_to_the_baseline():
    slow = minutes(burst_balance=[90.0 - i * 0.2 for i in range(60)], **BUSY)
    assert volume_verdict(slow, NOW, VolumeFacts("gp2", 50)).status is Status.WARNING
    empty = minutes(burst_balance=0.0, **BUSY)
    verdict = volume_verdict(empty, NOW, VolumeFacts("gp2", 50))
    assert verdict.status is Status.CRITICAL
    assert verdict.reason == "gp2 burst credits exhausted: held to its 150 IOPS baseline"
    st1 = volume_verdict(minutes(burst_balance=0.0), NOW, VolumeFacts("st1", 500))
    assert st1.reason == "st1 burst credits exhausted: held to its 19.5 MiB/s baseline"


def test_it_is_ok_with_an_st1_volume_at_its_baseline():
    samples = minutes(burst_balance=100.0, read_ops=1170.0, write_ops=0.0,
                      read_bytes=1170 * 1048576.0, write_bytes=0.0)  # fmt: skip
    verdict = volume_verdict(samples, NOW, VolumeFacts("st1", 500))
    assert verdict.status is Status.OK
    assert verdict.reason == "ok: 20 IOPS, 19.5 MiB/s, burst balance 100 %, not draining"


def test_it_warns_of_a_gp3_volume_at_its_provisioned_limit():
    samples = minutes(read_ops=150000.0, write_ops=30000.0, read_bytes=1e9, write_bytes=1e8,
                      iops_exceeded=1.0)  # fmt: skip
    verdict = volume_verdict(samples, NOW, VolumeFacts("gp3", 200, iops=3000))
    assert verdict.status is Status.WARNING
    assert "IOPS above 90 % of its provisioned 3,000 IOPS for 15 min" in verdict.reason
    assert "asked for more in 15 of the last 15 min (VolumeIOPSExceededCheck)" in verdict.reason


def test_it_calls_a_stalled_volume_impaired_and_critical():
    stalled = [0.0] * 58 + [1.0, 0.0]
    verdict = volume_verdict(minutes(stalled=stalled, **BUSY), NOW, VolumeFacts("gp3", 100))
    assert verdict.status is Status.CRITICAL
    assert (
        verdict.reason == "I/O stalled at 11:58 UTC (VolumeStalledIOCheck): the volume is impaired"
    )
    old = [1.0] + [0.0] * 59
    assert (
        volume_verdict(minutes(stalled=old, **BUSY), NOW, VolumeFacts("gp3", 100)).status
        is Status.OK
    )


def test_it_forecasts_the_instances_ebs_bandwidth_burst_for_each_of_its_volumes():
    balances = [
        InstanceSample(NOW - timedelta(minutes=60 - 5 * i), io_balance=100.0 - 8 * i)
        for i in range(12)
    ]
    instance = InstanceFacts("bw-1 (i-0abc)", balances)
    verdict = volume_verdict(minutes(**BUSY), NOW, VolumeFacts("gp3", 100), instance=instance)
    assert verdict.status is Status.CRITICAL
    assert verdict.reason.startswith(
        "instance bw-1 (i-0abc): EBS I/O burst (EBSIOBalance%) credits run out in ~"
    )
    assert verdict.figures["instance_io_credit_state"] == "draining"


def test_missing_data_is_unknown_never_ok_and_a_detached_volume_has_nothing_to_judge():
    assert volume_verdict([], NOW, VolumeFacts("gp2", 50)).status is Status.UNKNOWN
    gaps = minutes(burst_balance=None)
    assert volume_verdict(gaps, NOW, VolumeFacts("gp2", 50)).reason == "no data yet"
    stale = minutes(end=NOW - timedelta(minutes=29), **BUSY)
    assert volume_verdict(stale, NOW, VolumeFacts("gp2", 50)).reason == "no data for 30 min"
    detached = volume_verdict([], NOW, VolumeFacts("gp2", 50, attached=False))
    assert detached.status is Status.OK and detached.reason.startswith("not attached")


def test_a_gap_in_the_balance_is_not_read_as_an_empty_bucket():
    balance = [100.0 - i * 0.01 for i in range(60)]
    balance[-1] = None
    verdict = volume_verdict(minutes(burst_balance=balance, **BUSY), NOW, VolumeFacts("gp2", 50))
    assert verdict.status is Status.OK and verdict.figures["burst_balance_pct"] == pytest.approx(
        99.42
    )

"""Synthetic EBS volumes and instances for the demo and the benchmark (pure: no Django, no I/O).

Each profile is a workload on a volume type, drawn minute by minute from the documented burst
model (``limits``: a gp2 volume earns its baseline and spends above it from a 5.4 million
credit bucket; at an empty bucket it is held to the baseline). A bursting profile runs a
cycle: it drains (busy), stays out of credits a while, then refills at rest to full just as
the next cycle starts, so the balance is continuous; ``phase`` shifts the cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from .limits import GP2_CREDITS, performance

KIB = 1024


@dataclass(frozen=True)
class Profile:
    key: str
    volume_type: str
    size_gib: int
    busy_iops: float  # demand while busy (draining, for a bursting volume)
    rest_iops: float = 0.0  # demand at rest (below the baseline: earning)
    exhausted_minutes: int = 45
    request_kib: float = 16.0
    iops: int | None = None  # provisioned (gp3, io1, io2)
    throughput_mibps: int | None = None  # provisioned (gp3)
    stalled: bool = False


PROFILES: dict[str, Profile] = {
    p.key: p
    for p in (
        # 50 GiB gp2 (150 IOPS baseline) at 450 IOPS: its bucket lasts 5 h, refills in 10.
        Profile("gp2-draining", "gp2", 50, busy_iops=450.0),
        Profile("gp2-steady", "gp2", 50, busy_iops=120.0, rest_iops=120.0),
        Profile("gp2-idle", "gp2", 100, busy_iops=10.0, rest_iops=10.0),
        Profile("gp3-at-limit", "gp3", 200, busy_iops=3000.0, rest_iops=3000.0, iops=3000),
        Profile("gp3-quiet", "gp3", 100, busy_iops=400.0, rest_iops=400.0, iops=3000),
        Profile("io1-busy", "io1", 200, busy_iops=1800.0, rest_iops=1800.0, iops=2000),
        # st1 at its baseline: 500 GiB earn 19.5 MiB/s; reading 1 MiB requests at it.
        Profile("st1-baseline", "st1", 500, busy_iops=19.5, rest_iops=19.5, request_kib=1024.0),
        Profile("sc1-cold", "sc1", 1000, busy_iops=1.0, rest_iops=1.0, request_kib=1024.0),
        Profile("gp2-impaired", "gp2", 50, busy_iops=50.0, rest_iops=50.0, stalled=True),
    )
}
INSTANCE_PROFILES = ("steady", "ebs-draining")


@dataclass(frozen=True)
class Cycle:
    """Minutes of a bursting profile's cycle: draining, out of credits, refilling."""

    drain: int
    exhausted: int
    refill: int

    @property
    def length(self) -> int:
        return self.drain + self.exhausted + self.refill


def _earn_spend(p: Profile) -> tuple[float, float, float]:
    """(bucket size, spent a minute while busy, earned a minute at rest), in credit units."""
    perf = performance(p.volume_type, p.size_gib, p.iops, p.throughput_mibps)
    if p.volume_type == "gp2":
        base = perf.baseline_iops or 0.0
        return float(GP2_CREDITS), (p.busy_iops - base) * 60, (base - p.rest_iops) * 60
    base = perf.baseline_mibps or 0.0
    busy = p.busy_iops * p.request_kib / KIB
    rest = p.rest_iops * p.request_kib / KIB
    bucket = p.size_gib * 1024.0  # MiB: a TiB of credits per TiB (the demo's assumption)
    return bucket, (busy - base) * 60, (base - rest) * 60


@cache
def cycle(key: str) -> Cycle | None:
    """The profile's cycle, or None when it never spends its bucket."""
    p = PROFILES[key]
    if p.volume_type not in ("gp2", "st1", "sc1"):
        return None
    bucket, spend, earn = _earn_spend(p)
    if spend <= 0 or earn <= 0:
        return None
    return Cycle(round(bucket / spend), p.exhausted_minutes, round(bucket / earn))


def balance_pct(key: str, minute: int, phase: int = 0) -> float | None:
    """BurstBalance at ``minute`` (Unix minutes), in percent; 100 for a profile that does not
    spend; None for a type that has no bucket."""
    p = PROFILES[key]
    if p.volume_type not in ("gp2", "st1", "sc1"):
        return None
    c = cycle(key)
    if c is None:
        return 100.0
    at = (minute + phase) % c.length
    if at < c.drain:
        return 100.0 * (1 - at / c.drain)
    if at < c.drain + c.exhausted:
        return 0.0
    return 100.0 * (at - c.drain - c.exhausted) / c.refill


def busy(key: str, minute: int, phase: int = 0) -> bool:
    c = cycle(key)
    return c is not None and (minute + phase) % c.length < c.drain + c.exhausted


def minute_values(key: str, minute: int, phase: int = 0) -> dict[str, float]:
    """A volume's metrics for one minute, as CloudWatch would report them [M1]."""
    p = PROFILES[key]
    perf = performance(p.volume_type, p.size_gib, p.iops, p.throughput_mibps)
    demand = p.busy_iops if busy(key, minute, phase) or cycle(key) is None else p.rest_iops
    balance = balance_pct(key, minute, phase)
    served = demand
    held = balance == 0.0 and demand > 0
    if held and perf.baseline_iops is not None:
        served = min(demand, perf.baseline_iops)
    elif held and perf.baseline_mibps is not None:
        served = min(demand, perf.baseline_mibps * KIB / p.request_kib)
    if p.stalled:
        served = 0.0
    ops = served * 60
    reads, writes = ops * 0.7, ops * 0.3
    size = p.request_kib * KIB
    latency = 0.0008 if p.volume_type in ("gp2", "gp3", "io1", "io2") else 0.012
    queue = 0.5 + (demand / served if served else 32.0) * (4.0 if held else 0.3)
    values = {
        "read_ops": reads,
        "write_ops": writes,
        "read_bytes": reads * size,
        "write_bytes": writes * size,
        "read_time": reads * latency * (3 if held else 1),
        "write_time": writes * latency * (3 if held else 1),
        "idle_time": 60.0 if not ops else max(0.0, 60.0 - ops * latency),
        "queue_length": queue,
        "stalled": 1.0 if p.stalled else 0.0,
        "iops_exceeded": 1.0 if held or (p.iops and demand >= p.iops) else 0.0,
        "throughput_exceeded": 0.0,
    }
    if balance is not None:
        values["burst_balance"] = balance
    if p.volume_type in ("io1", "io2") and p.iops:
        values["throughput_pct"] = 100.0
        values["consumed_ops"] = ops * max(1.0, p.request_kib / 256)
    return values


def instance_values(profile: str, minute: int, phase: int = 0) -> dict[str, float]:
    """An instance's EBS bandwidth metrics: the balances every fifth minute [M3]. An
    ``ebs-draining`` instance empties its EBS I/O bucket over 60 minutes of a 24 h day."""
    values = {"iops_exceeded": 0.0, "throughput_exceeded": 0.0}
    if minute % 5:
        return values
    io = 100.0
    if profile == "ebs-draining":
        at = (minute + phase) % 1440
        io = max(0.0, 100.0 - at * 100 / 60) if at < 90 else min(100.0, (at - 90) * 100 / 1350)
        values["iops_exceeded"] = 1.0 if io == 0 else 0.0
    values["io_balance"] = io
    values["byte_balance"] = 100.0
    return values

"""Synthetic EFS workloads whose metrics follow the bursting credit model, for the demo fleet
and the benchmark's fleet stand-in.

Pure (no Django, no I/O, no clock): ``minute_values(profile, fs_seed, minute)`` gives every
AWS/EFS statistic Vigil asks for, for any minute, so the demo looks alive at any time and a
back-fill of any window has data. Each profile repeats a day: the credit balance is simulated
minute by minute from the profile's balance at the start of its day with
``verdict.credit_step`` (earned at the baseline, spent above it, throughput capped at the
baseline when empty), and that day is cached, so a fleet of a thousand file systems costs a
few simulated days, not one per file system. A file system's ``phase_min`` shifts its day, so
two file systems of one profile are at different points of it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from .limits import LIMITS
from .metrics import GIB, KIB, MIB, TIB, estimated_io_limit_pct
from .verdict import credit_step

DAY_MIN = 1440
#: PermittedThroughput in Elastic mode: the maximum write rate [1], the documented one.
ELASTIC_WRITE_MIBPS = LIMITS["elastic"].write_mibps


@dataclass(frozen=True)
class Profile:
    """A workload. Rates are actual (unmetered) MiB/s and ops/s during ``busy`` hours of the
    day and ``idle_factor`` of them otherwise."""

    key: str
    standard_gib: float
    read_mibps: float
    write_mibps: float
    metadata_ops: float = 20.0
    read_kib: float = 64.0
    write_kib: float = 64.0
    busy: tuple[int, int] = (0, 24)
    idle_factor: float = 1.0
    start_balance_tib: float = 2.1  # new file systems start with 2.1 TiB of credits [6]
    throughput_mode: str = "bursting"
    performance_mode: str = "generalPurpose"
    provisioned_mibps: float | None = None
    ia_gib: float = 0.0
    archive_gib: float = 0.0  # Archive exists only with Elastic throughput
    clients: int = 4


PROFILES: dict[str, Profile] = {
    p.key: p
    for p in (
        # Spends ~30 MiB/s above a 9.8 MiB/s baseline: 2.1 TiB last about 20 h of its day.
        Profile("draining", 200, read_mibps=45, write_mibps=25, metadata_ops=50),
        # Small reads at ~3,400 ops/s: PercentIOLimit near 100 %, throughput far under baseline.
        Profile("io-bound", 1024, 0, 0, metadata_ops=0, read_kib=4, write_kib=4, clients=12),
        Profile("build-cache", 500, 60, 40, metadata_ops=400, busy=(8, 18), idle_factor=0.05),
        Profile("web-assets", 100, 3.0, 0.3, metadata_ops=15, ia_gib=40),
        Profile("nightly-backup", 300, 90, 2, busy=(1, 3), idle_factor=0.02),
        Profile("archive", 1, 0.05, 0.01, metadata_ops=1, ia_gib=900, clients=1),
        Profile("scratch", 20, 4, 2, start_balance_tib=0.05, clients=2),
        Profile("analytics", 2048, 80, 30, metadata_ops=100, performance_mode="maxIO"),
        # Steady and heavy all day (ML training reading its data set): Elastic bills every
        # byte, so provisioning its peak costs a small part of it.
        Profile(
            "elastic", 50, 150, 60, metadata_ops=200, throughput_mode="elastic", archive_gib=500
        ),
        # Provisioned at 64 MiB/s for a job of an hour a day: bursting carries it for the
        # price of its storage.
        Profile(
            "provisioned",
            50,
            35,
            20,
            busy=(9, 10),
            idle_factor=0.02,
            throughput_mode="provisioned",
            provisioned_mibps=64,
        ),
    )
}

#: The demo fleet: (name, profile, region, day phase in minutes). Two "draining" file
#: systems half a day apart mean one is always heading for exhaustion.
DEMO_FLEET: tuple[tuple[str, str, str, int], ...] = (
    ("demo-builds-primary", "draining", "us-east-1", 700),
    ("demo-builds-replica", "draining", "eu-west-1", 1420),
    ("demo-sessions-small-io", "io-bound", "us-east-1", 0),
    ("demo-ci-cache", "build-cache", "us-west-2", 0),
    ("demo-web-assets", "web-assets", "eu-west-1", 0),
    ("demo-nightly-backup", "nightly-backup", "eu-central-1", 0),
    ("demo-cold-archive", "archive", "eu-central-1", 0),
    ("demo-scratch", "scratch", "ap-east-1", 600),
    ("demo-analytics-maxio", "analytics", "me-south-1", 0),
    ("demo-ml-elastic", "elastic", "us-west-2", 0),
    ("demo-media-provisioned", "provisioned", "ap-east-1", 0),
    ("demo-home-dirs", "web-assets", "me-south-1", 300),
)


def _demand(profile: Profile, minute_of_day: int) -> tuple[float, float, float, float]:
    """(read MiB/s, write MiB/s, metadata ops/s, read ops/s) asked for in that minute."""
    hour = minute_of_day // 60
    start, end = profile.busy
    factor = 1.0 if start <= hour < end else profile.idle_factor
    if profile.key == "io-bound":
        read_ops = 3400.0 * factor
        return read_ops * 4 * KIB / MIB, 0.0, 0.0, read_ops
    read = profile.read_mibps * factor
    return read, profile.write_mibps * factor, profile.metadata_ops * factor, 0.0


def _metered_mibps(read: float, write: float, meta_ops: float, read_ops: float, p: Profile):
    read_ops = read_ops or read * MIB / (p.read_kib * KIB)
    write_ops = write * MIB / (p.write_kib * KIB)
    floor = 4 * KIB / MIB  # every request meters at least 4 KiB [4]
    metered_read = max(read / 3.0, read_ops * floor)
    return metered_read + max(write, write_ops * floor) + meta_ops * floor


@lru_cache(maxsize=512)
def _day(key: str, day: int) -> tuple[tuple[float, float, float], ...]:
    """(balance at the minute's start, permitted bytes/s, served/demand) for each minute."""
    p = PROFILES[key]
    standard = p.standard_gib * GIB
    balance = p.start_balance_tib * TIB
    out = []
    for minute in range(DAY_MIN):
        demand = _metered_mibps(*_demand(p, minute), p) * MIB
        step = credit_step(balance, demand, standard, 60.0, max_balance_bytes=2.1 * TIB)
        share = step.served_bytes_per_s / demand if demand > 0 else 1.0
        out.append((step.balance_bytes, step.permitted_bytes_per_s, share))
        balance = step.balance_bytes
    return tuple(out)


def _jitter(seed: int, minute: int) -> float:
    return 1.0 + 0.06 * math.sin(minute * 0.37 + seed) + 0.03 * math.sin(minute * 2.1 + seed * 3)


def sizes(profile: Profile) -> dict[str, int]:
    """What DescribeFileSystems says of the profile's size (``SizeInBytes``), in bytes."""
    standard, ia, archive = (
        int(profile.standard_gib * GIB),
        int(profile.ia_gib * GIB),
        int(profile.archive_gib * GIB),
    )
    return {
        "Value": standard + ia + archive,
        "ValueInStandard": standard,
        "ValueInIA": ia,
        "ValueInArchive": archive,
    }


def minute_values(profile: Profile, seed: int, minute: int, phase_min: int = 0) -> dict:
    """Every statistic Vigil requests for one minute (``minute`` = Unix seconds // 60),
    keyed like ``cloudwatch_plan.MetricSpec.field``; metrics the mode does not have are absent."""
    p = profile
    shifted = minute + phase_min
    day, minute_of_day = divmod(shifted, DAY_MIN)
    read, write, meta_ops, read_ops = _demand(p, minute_of_day)
    j = _jitter(seed, minute)
    read, write, meta_ops, read_ops = read * j, write * j, meta_ops * j, read_ops * j
    standard = p.standard_gib * GIB
    values: dict[str, float] = {}
    if p.throughput_mode == "bursting":
        balance, permitted, share = _day(p.key, day)[minute_of_day]
        values["burst_credit_balance"] = balance
    elif p.throughput_mode == "provisioned":
        permitted = max(p.provisioned_mibps or 0.0, standard / GIB * 50 / 1024) * MIB
        share = 1.0
    else:
        permitted, share = ELASTIC_WRITE_MIBPS * MIB, 1.0
    metered = _metered_mibps(read, write, meta_ops, read_ops, p) * MIB
    if p.throughput_mode != "bursting":
        share = min(1.0, permitted / metered) if metered > 0 else 1.0
    read, write, meta_ops, read_ops = (
        read * share,
        write * share,
        meta_ops * share,
        read_ops * share,
    )
    r_ops = read_ops or read * MIB / (p.read_kib * KIB)
    w_ops = write * MIB / (p.write_kib * KIB)
    values.update(
        data_read_bytes=read * MIB * 60,
        data_read_count=round(r_ops * 60),
        data_write_bytes=write * MIB * 60,
        data_write_count=round(w_ops * 60),
        metadata_bytes=meta_ops * 60 * 512,
        metadata_count=round(meta_ops * 60),
        metered_bytes=metered * share * 60,
        permitted_throughput=permitted,
        client_connections=float(p.clients),
        storage_standard_bytes=standard,
        storage_ia_bytes=p.ia_gib * GIB,
        storage_total_bytes=standard + (p.ia_gib + p.archive_gib) * GIB,
    )
    values["total_bytes"] = (
        values["data_read_bytes"] + values["data_write_bytes"] + values["metadata_bytes"]
    )
    values["total_count"] = (
        values["data_read_count"] + values["data_write_count"] + values["metadata_count"]
    )
    if p.performance_mode == "generalPurpose" and p.throughput_mode != "elastic":
        # Elastic file systems report no PercentIOLimit: their limits are the documented
        # ones (``limits.LIMITS``).
        pct = estimated_io_limit_pct(r_ops, w_ops + meta_ops) * 1.02  # a minute's maximum
        values["percent_io_limit"] = min(100.0, pct)
    return values

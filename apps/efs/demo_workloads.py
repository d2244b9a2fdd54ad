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

from .documented import LIMITS, ModeLimits, credit_cap_bytes, mode_limits
from .metrics import (
    GIB,
    KIB,
    MIB,
    TIB,
    baseline_mibps,
    billed_request_bytes,
    estimated_io_limit_pct,
)
from .metrics import metered_request_bytes as metered_bytes_of
from .verdict import credit_step

DAY_MIN = 1440
#: The size of a metadata request, for the stand-in (a getattr's answer).
METADATA_BYTES = 512


@dataclass(frozen=True)
class Profile:
    """A workload. Rates are actual (unmetered) MiB/s and ops/s during ``busy`` hours of the
    day and ``idle_factor`` of them otherwise."""

    key: str
    standard_gib: float
    read_mibps: float
    write_mibps: float
    metadata_ops: float = 20.0
    #: The share of metadata operations that write (create, setattr, remove...).
    metadata_write_share: float = 0.1
    read_kib: float = 64.0
    write_kib: float = 64.0
    busy: tuple[int, int] = (0, 24)
    idle_factor: float = 1.0
    #: Credits at the start of its day; None: the most it can hold (``credit_cap_bytes``).
    start_balance_tib: float | None = None
    throughput_mode: str = "bursting"
    performance_mode: str = "generalPurpose"
    provisioned_mibps: float | None = None
    ia_gib: float = 0.0
    archive_gib: float = 0.0  # Archive exists only with Elastic throughput
    clients: int = 4
    #: Minute-to-minute wobble (and a minute's PercentIOLimit Maximum 2 % above its mean);
    #: off for workloads worked by hand in the tests.
    jitter: bool = True
    #: Replication: a sync every this many minutes (0: not replicated), none during these
    #: hours of the day (TimeSinceLastSync then grows).
    sync_every_min: int = 0
    sync_stall: tuple[int, int] | None = None


PROFILES: dict[str, Profile] = {
    p.key: p
    for p in (
        # Spends ~30 MiB/s above a 9.8 MiB/s baseline: 2.1 TiB last about 20 h of its day.
        # Replicated every 5 minutes, except for an hour at 02:00 UTC.
        Profile(
            "draining",
            200,
            read_mibps=45,
            write_mibps=25,
            metadata_ops=50,
            sync_every_min=5,
            sync_stall=(2, 3),
        ),
        # Small requests, mostly getattr-like metadata reads, at ~33,000 ops/s: PercentIOLimit
        # near 100 % of today's 35,000 reads / 7,000 writes; metered ~71 MiB/s, under the
        # 100 MiB/s baseline of 2 TiB (each 4 KiB data request metered as 32 KiB).
        Profile(
            "io-bound",
            2048,
            read_mibps=2500 * 4 / 1024,
            write_mibps=200 * 4 / 1024,
            metadata_ops=30_300,
            metadata_write_share=300 / 30_300,
            read_kib=4,
            write_kib=4,
            clients=12,
        ),
        Profile("build-cache", 500, 60, 40, metadata_ops=400, busy=(8, 18), idle_factor=0.05),
        Profile("web-assets", 100, 3.0, 0.3, metadata_ops=15, ia_gib=40),
        Profile("nightly-backup", 300, 90, 2, busy=(1, 3), idle_factor=0.02),
        # Cold data in Archive: AWS allows that class only with Elastic throughput.
        Profile(
            "archive",
            1,
            0.05,
            0.01,
            metadata_ops=1,
            ia_gib=100,
            archive_gib=900,
            throughput_mode="elastic",
            clients=1,
        ),
        Profile("scratch", 20, 4, 2, start_balance_tib=0.05, clients=2),
        Profile("analytics", 2048, 80, 30, metadata_ops=100, performance_mode="maxIO"),
        # Steady and heavy all day (ML training reading its data set): Elastic bills every
        # byte, so provisioning its peak costs a small part of it.
        Profile("elastic", 50, 150, 60, metadata_ops=200, throughput_mode="elastic"),
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
#: Demo replication: (source, destination) names of ``DEMO_FLEET``.
DEMO_REPLICAS: tuple[tuple[str, str], ...] = (("demo-builds-primary", "demo-builds-replica"),)


def _demand(profile: Profile, minute_of_day: int) -> tuple[float, float, float]:
    """(read MiB/s, write MiB/s, metadata ops/s) asked for in that minute."""
    hour = minute_of_day // 60
    start, end = profile.busy
    factor = 1.0 if start <= hour < end else profile.idle_factor
    return profile.read_mibps * factor, profile.write_mibps * factor, profile.metadata_ops * factor


@lru_cache(maxsize=64)
def _per_request(key: str) -> tuple[float, float, float, float, float, float, float, float]:
    """What one request of each kind counts as ([METRICS], [SIZES]: data at least 32 KiB,
    metadata 4 KiB; reads metered at a third): (metered read, write, metadata read, metadata
    write; billed read, write, metadata read, metadata write) bytes."""
    p = PROFILES[key]
    read, write = p.read_kib * KIB, p.write_kib * KIB
    return (
        metered_bytes_of(read, is_read=True),
        metered_bytes_of(write),
        metered_bytes_of(METADATA_BYTES, is_read=True, metadata=True),
        metered_bytes_of(METADATA_BYTES, metadata=True),
        billed_request_bytes(read),
        billed_request_bytes(write),
        billed_request_bytes(METADATA_BYTES, metadata=True),
        billed_request_bytes(METADATA_BYTES, metadata=True),
    )


def _ops(p: Profile, read: float, write: float, meta: float) -> tuple[float, float, float, float]:
    """(data reads, data writes, metadata reads, metadata writes) a second."""
    meta_writes = meta * p.metadata_write_share
    return (
        read * MIB / (p.read_kib * KIB),
        write * MIB / (p.write_kib * KIB),
        meta - meta_writes,
        meta_writes,
    )


def _metered_mibps(p: Profile, read: float, write: float, meta: float) -> float:
    costs = _per_request(p.key)
    return sum(n * c for n, c in zip(_ops(p, read, write, meta), costs[:4], strict=True)) / MIB


@lru_cache(maxsize=512)
def _day(key: str, day: int) -> tuple[tuple[float, float, float], ...]:
    """(balance at the minute's start, permitted bytes/s, served/demand) for each minute."""
    p = PROFILES[key]
    standard = p.standard_gib * GIB
    cap = credit_cap_bytes(standard)
    balance = cap if p.start_balance_tib is None else p.start_balance_tib * TIB
    out = []
    for minute in range(DAY_MIN):
        demand = _metered_mibps(p, *_demand(p, minute)) * MIB
        step = credit_step(balance, demand, standard, 60.0, max_balance_bytes=cap)
        share = step.served_bytes_per_s / demand if demand > 0 else 1.0
        out.append((step.balance_bytes, step.permitted_bytes_per_s, share))
        balance = step.balance_bytes
    return tuple(out)


@lru_cache(maxsize=256)
def _limits(file_system_type: str, throughput_mode: str, region: str):
    return mode_limits(LIMITS, file_system_type, throughput_mode, region)


def _jitter(seed: int, minute: int) -> float:
    return 1.0 + 0.06 * math.sin(minute * 0.37 + seed) + 0.03 * math.sin(minute * 2.1 + seed * 3)


def sync_lag_s(profile: Profile, minute_of_day: int) -> float | None:
    """TimeSinceLastSync at the start of a minute of the profile's day: seconds since its last
    sync, a sync every ``sync_every_min`` minutes (at the start of a minute) outside
    ``sync_stall``; None when not replicated."""
    every = profile.sync_every_min
    if not every:
        return None
    last = minute_of_day - minute_of_day % every
    if profile.sync_stall is not None:
        stall_start, stall_end = (h * 60 for h in profile.sync_stall)
        if stall_start <= last < stall_end:
            last = stall_start - 1 - (stall_start - 1) % every
    return float((minute_of_day - last) * 60)


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


def minute_values(
    profile: Profile,
    seed: int,
    minute: int,
    phase_min: int = 0,
    *,
    region: str = "",
    file_system_type: str = "regional",
) -> dict:
    """Every statistic Vigil requests for one minute (``minute`` = Unix seconds // 60),
    keyed like ``cloudwatch_plan.MetricSpec.field``; metrics the mode does not have are absent.
    ``region`` and ``file_system_type`` choose the documented limits (Elastic's permitted
    throughput, the PercentIOLimit budget)."""
    p = profile
    shifted = minute + phase_min
    day, minute_of_day = divmod(shifted, DAY_MIN)
    read, write, meta = _demand(p, minute_of_day)
    j = _jitter(seed, minute) if p.jitter else 1.0
    read, write, meta = read * j, write * j, meta * j
    standard = p.standard_gib * GIB
    limits = _limits(file_system_type, p.throughput_mode, region)
    metered = _metered_mibps(p, read, write, meta) * MIB
    permitted, share, balance = _throughput(p, day, minute_of_day, standard, limits, metered)
    values: dict[str, float] = {}
    if balance is not None:
        values["burst_credit_balance"] = balance
    read, write, meta = read * share, write * share, meta * share
    r_ops, w_ops, mr_ops, mw_ops = _ops(p, read, write, meta)
    counts = (round(r_ops * 60), round(w_ops * 60), round(mr_ops * 60), round(mw_ops * 60))
    values.update(
        data_read_bytes=read * MIB * 60,
        data_read_count=counts[0],
        data_write_bytes=write * MIB * 60,
        data_write_count=counts[1],
        metadata_read_bytes=counts[2] * METADATA_BYTES,
        metadata_read_count=counts[2],
        metadata_write_bytes=counts[3] * METADATA_BYTES,
        metadata_write_count=counts[3],
        metered_bytes=metered * share * 60,
        permitted_throughput=permitted,
        client_connections=float(p.clients),
        storage_standard_bytes=standard,
        storage_ia_bytes=p.ia_gib * GIB,
        storage_total_bytes=standard + (p.ia_gib + p.archive_gib) * GIB,
    )
    values["metadata_bytes"] = values["metadata_read_bytes"] + values["metadata_write_bytes"]
    values["metadata_count"] = counts[2] + counts[3]
    values["total_bytes"] = _total_bytes(values, counts, _per_request(p.key)[4:])
    values["total_count"] = sum(counts)
    if p.performance_mode == "generalPurpose" and p.throughput_mode != "elastic":
        # Elastic file systems report no PercentIOLimit here: their limits are the documented
        # ones (``documented.LIMITS``).
        pct = estimated_io_limit_pct(r_ops + mr_ops, w_ops + mw_ops, limits)
        values["percent_io_limit"] = min(100.0, pct * (1.02 if p.jitter else 1.0))
    lag = sync_lag_s(p, minute_of_day)
    if lag is not None:
        values["time_since_last_sync"] = lag
    return values


def _throughput(
    p: Profile, day: int, minute_of_day: int, standard: float, limits: ModeLimits, metered: float
) -> tuple[float, float, float | None]:
    """(permitted bytes/s, the share of the demand served, the burst credit balance) in that
    minute of ``day``, for ``metered`` bytes/s asked for. Bursting takes all three from its
    simulated day; provisioned and Elastic (no balance: None) serve what fits under their
    permitted throughput."""
    if p.throughput_mode == "bursting":
        balance, permitted, share = _day(p.key, day)[minute_of_day]
        return permitted, share, balance
    if p.throughput_mode == "provisioned":
        permitted = max(p.provisioned_mibps or 0.0, baseline_mibps(standard)) * MIB
    else:  # Elastic: PermittedThroughput is the maximum write throughput [METRICS]
        permitted = limits.write_mibps * MIB
    share = min(1.0, permitted / metered) if metered > 0 else 1.0
    return permitted, share, None


def _total_bytes(
    values: dict[str, float], counts: tuple[int, int, int, int], billed: tuple[float, ...]
) -> float:
    """TotalIOBytes: each kind's bytes, counted at least at its metering minimum a request
    [METRICS], where the per-kind metrics count actual bytes."""
    kinds = ("data_read_bytes", "data_write_bytes", "metadata_read_bytes", "metadata_write_bytes")
    return sum(
        max(values[kind], n * least) for kind, n, least in zip(kinds, counts, billed, strict=True)
    )

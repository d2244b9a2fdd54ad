"""What AWS documents about EFS, as data: one table of limits and one of metering, each figure
with its source and the day it was read (prices are the third table, ``costs.PRICES``).

Pure: no Django, no I/O. ``VIGIL_EFS_LIMITS`` and ``VIGIL_EFS_METERING`` override any figure
(``merged``), as ``VIGIL_EFS_PRICES`` does prices. Which of today's rules replace the 2018
articles Vigil began from is said in docs/efs.md ("EFS: documented figures").

Sources, read on 2026-11-26 through the ``search`` tool (copies of the pages' current text):

- [PERF] "Amazon EFS performance specifications",
  https://docs.aws.amazon.com/efs/latest/ug/performance.html: the General Purpose table (IOPS and
  per-file-system throughput by file system type and throughput mode), "a combined 100% of its
  read and write throughput", reads metered "up to one-third the rate of write operations",
  the bursting rules and "a maximum credit balance of 2.1 TiB for file systems smaller than
  1 TiB, or 2.1 TiB per TiB stored for file systems larger than 1 TiB".
- [QUOTAS] "Amazon EFS quotas", https://docs.aws.amazon.com/efs/latest/ug/limits.html: the
  per-Region throughput of each mode (Regional Elastic 60/5 GiBps in eleven Regions, 20/1
  elsewhere; Provisioned 10/3.33 in four, 3/1 elsewhere; One Zone Elastic and Provisioned 3/1
  everywhere; Bursting, Regional or One Zone, 5/3 in five, 3/1 elsewhere) and Elastic's IOPS
  quotas (250,000 reads of frequently accessed data, 90,000 of infrequently accessed, 50,000
  writes).
- [METRICS] "CloudWatch metrics for Amazon EFS",
  https://docs.aws.amazon.com/efs/latest/ug/efs-metrics.html: ``TotalIOBytes`` "Data operations
  are metered at 32 KiB and other operations are metered at 4 KiB. After the minimum, all
  operations are metered per KiB"; ``MetadataReadIOBytes``, ``MetadataWriteIOBytes``;
  ``TimeSinceLastSync`` per ``DestinationFileSystemId``.
- [SIZES] "How Amazon EFS reports file system and object sizes",
  https://docs.aws.amazon.com/efs/latest/ug/metered-sizes.html: Elastic meters and bills
  "metadata reads as read operations and metadata writes as write operations. Metadata
  operations are metered in 1 KiB increments after the first 4 KiB. Data operations are
  metered in 1 KiB increments after the first 32 KiB"; reads metered at one-third.
- [REPL] AWS News Blog, "New – Replication for Amazon Elastic File System (EFS)" (2022-01-25),
  https://aws.amazon.com/blogs/aws/new-replication-for-amazon-elastic-file-system-efs/: "most
  changes are replicated within a minute, with an overall Recovery Point Objective (RPO) of
  15 minutes for most file systems".

History kept, not followed: the 2018 article Vigil began from (and a sentence the performance
page still carries) meters "every NFS request ... as 4 KB of throughput, or its actual request
and response size, whichever is larger" (``METERING_2018``); today's metrics and metering pages
raise data operations to 32 KiB, and they are the pages that define the metrics Vigil reads.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

READ_ON = "2026-11-26"
PERF = "https://docs.aws.amazon.com/efs/latest/ug/performance.html"
QUOTAS = "https://docs.aws.amazon.com/efs/latest/ug/limits.html"
METRICS = "https://docs.aws.amazon.com/efs/latest/ug/efs-metrics.html"
SIZES = "https://docs.aws.amazon.com/efs/latest/ug/metered-sizes.html"
REPL = "https://aws.amazon.com/blogs/aws/new-replication-for-amazon-elastic-file-system-efs/"

GIBPS = 1024.0  # MiB/s in a GiB/s
KIB = 1024


@dataclass(frozen=True)
class Figure:
    """One documented figure: its value in ``unit``, where it was read, and when."""

    value: float
    unit: str
    source: str
    read_on: str = READ_ON
    note: str = ""


#: A table: key -> figure. A key may have Region variants, ``<key>@<region>``.
Table = Mapping[str, Figure]

FILE_SYSTEM_TYPES = ("regional", "one_zone")
THROUGHPUT_MODES = ("elastic", "provisioned", "bursting")

# [QUOTAS]: the Regions with the higher per-file-system throughput of each mode.
_ELASTIC_FAST = (
    *("us-east-2", "us-east-1", "us-west-2", "ap-south-1", "ap-northeast-2", "ap-southeast-1"),
    *("ap-southeast-2", "ap-northeast-1", "eu-central-1", "eu-west-1", "eu-west-2"),
)
_PROVISIONED_FAST = ("us-east-2", "us-east-1", "us-west-2", "eu-west-1")
_BURSTING_FAST = ("us-east-2", "us-east-1", "us-west-2", "ap-southeast-2", "eu-west-1")


def _mibps(key: str, everywhere: float, faster: float, regions: tuple[str, ...]) -> dict:
    """``key`` at ``everywhere`` GiB/s, and at ``faster`` in ``regions`` ([QUOTAS])."""
    note = "all other Regions" if regions else "all Regions"
    out = {key: Figure(everywhere * GIBPS, "MiB/s", QUOTAS, note=note)}
    out.update({f"{key}@{r}": Figure(faster * GIBPS, "MiB/s", QUOTAS) for r in regions})
    return out


def _iops(fs_type: str, mode: str, read: float, write: float, note: str = "") -> dict:
    return {
        f"{fs_type}.{mode}.read_iops": Figure(read, "ops/s", PERF, note=note),
        f"{fs_type}.{mode}.write_iops": Figure(write, "ops/s", PERF, note=note),
    }


#: Documented limits per file system, and the bursting and replication rules.
LIMITS: dict[str, Figure] = {
    **_iops(
        "regional",
        "elastic",
        250_000,
        50_000,
        "default quota; reads of infrequently accessed data 90,000; up to 10x on request",
    ),
    **_iops("regional", "provisioned", 55_000, 25_000),
    **_iops("regional", "bursting", 35_000, 7_000),
    **{
        k: v for mode in THROUGHPUT_MODES for k, v in _iops("one_zone", mode, 35_000, 7_000).items()
    },
    **_mibps("regional.elastic.read_mibps", 20, 60, _ELASTIC_FAST),
    **_mibps("regional.elastic.write_mibps", 1, 5, _ELASTIC_FAST),
    **_mibps("regional.provisioned.read_mibps", 3, 10, _PROVISIONED_FAST),
    **_mibps("regional.provisioned.write_mibps", 1, 3.33, _PROVISIONED_FAST),
    **_mibps("regional.bursting.read_mibps", 3, 5, _BURSTING_FAST),
    **_mibps("regional.bursting.write_mibps", 1, 3, _BURSTING_FAST),
    **_mibps("one_zone.elastic.read_mibps", 3, 3, ()),
    **_mibps("one_zone.elastic.write_mibps", 1, 1, ()),
    **_mibps("one_zone.provisioned.read_mibps", 3, 3, ()),
    **_mibps("one_zone.provisioned.write_mibps", 1, 1, ()),
    **_mibps("one_zone.bursting.read_mibps", 3, 5, _BURSTING_FAST),
    **_mibps("one_zone.bursting.write_mibps", 1, 3, _BURSTING_FAST),
    "bursting.baseline_kibps_per_gib": Figure(50, "KiB/s per GiB of Standard", PERF),
    "bursting.baseline_minimum_mibps": Figure(1, "MiB/s", PERF),
    "bursting.burst_mibps_per_tib": Figure(100, "MiB/s per TiB of Standard", PERF),
    "bursting.burst_minimum_mibps": Figure(100, "MiB/s", PERF),
    "bursting.credit_cap_tib": Figure(
        2.1, "TiB, or TiB per TiB of Standard above 1 TiB", PERF, note="the most credits held"
    ),
    "replication.rpo_minutes": Figure(15, "minutes", REPL, note="for most file systems"),
}

#: How requests are metered (``TotalIOBytes``, ``MeteredIOBytes``) and billed by Elastic.
METERING: dict[str, Figure] = {
    "data_minimum_bytes": Figure(32 * KIB, "bytes", METRICS, note="and [SIZES] for Elastic"),
    "metadata_minimum_bytes": Figure(4 * KIB, "bytes", METRICS, note="and [SIZES] for Elastic"),
    "increment_bytes": Figure(KIB, "bytes", SIZES, note="after the minimum"),
    "read_discount": Figure(
        3.0, "x", PERF, note="reads metered at up to one-third the rate of other operations"
    ),
}

#: The 2018 rule, kept as history (not a key of ``METERING``, never applied).
METERING_2018 = Figure(
    4 * KIB,
    "bytes",
    "https://github.com/awsdocs/amazon-efs-user-guide/blob/3046dd78002c8cffb8a059012634bb4d6af1ec6a"
    "/doc_source/performance.md (the 2018 rule, archived 2023)",
    read_on="2018",
    note="every NFS request metered as at least 4 KB; replaced by [METRICS] and [SIZES]",
)

_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d+$")


def merged(base: Table, overrides: Mapping[str, object] | None, setting: str) -> dict:
    """``base`` with ``overrides`` (a setting's JSON: ``{"regional.elastic.read_mibps": 30720,
    "regional.elastic.read_mibps@eu-north-1": 61440}``) applied. A key must be one of ``base``'s
    (a Region variant of one may be added); a value a finite number of ``base``'s unit.
    ValueError names what is wrong."""
    table = dict(base)
    if not overrides:
        return table
    if not isinstance(overrides, Mapping):
        raise ValueError("expected a JSON object of figures")
    for key, value in overrides.items():
        name, _, region = str(key).partition("@")
        if name not in base or (region and not _REGION.match(region)):
            raise ValueError(f"{key!r} is not one of the table's figures")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{key}: expected a number")
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{key}: {value} is not a figure")
        table[str(key)] = replace(
            base[name], value=float(value), source=setting, read_on="", note="overridden"
        )
    return table


def figure(table: Table, key: str, region: str = "") -> Figure:
    """``key``'s figure in ``region`` (its variant when the table has one)."""
    variant = table.get(f"{key}@{region}") if region else None
    return variant if variant is not None else table[key]


def value(table: Table, key: str, region: str = "") -> float:
    return figure(table, key, region).value


@dataclass(frozen=True)
class ModeLimits:
    """A file system's documented limits (its type, throughput mode and Region)."""

    read_iops: float
    write_iops: float
    read_mibps: float
    write_mibps: float
    sources: tuple[str, ...] = ()


def mode_limits(
    table: Table, file_system_type: str, throughput_mode: str, region: str = ""
) -> ModeLimits:
    """[PERF] and [QUOTAS] for a ``regional`` or ``one_zone`` file system in ``elastic``,
    ``provisioned`` or ``bursting`` mode (an unknown mode is taken as bursting)."""
    fs_type = file_system_type if file_system_type in FILE_SYSTEM_TYPES else "regional"
    mode = throughput_mode if throughput_mode in THROUGHPUT_MODES else "bursting"
    got = {
        name: figure(table, f"{fs_type}.{mode}.{name}", region)
        for name in ("read_iops", "write_iops", "read_mibps", "write_mibps")
    }
    sources = tuple(dict.fromkeys(f.source for f in got.values()))
    return ModeLimits(**{k: f.value for k, f in got.items()}, sources=sources)


def credit_cap_bytes(standard_bytes: float, table: Table = LIMITS) -> float:
    """The most burst credits a file system holds: 2.1 TiB, or 2.1 TiB per TiB of Standard
    storage above 1 TiB [PERF] (the Standard size, the one that earns them: inference)."""
    tib = 1024.0**4
    return value(table, "bursting.credit_cap_tib") * tib * max(1.0, standard_bytes / tib)

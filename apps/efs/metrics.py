"""Pure derivations over one minute of AWS/EFS CloudWatch metrics.

Facts (metrics, units, statistics, the console's formulas) come from the fact sheet
``shared/fixtures/efs-metrics.md``; the bracketed numbers in docstrings, such as [3], are its
source numbers. Documented figures (metering minimums, bursting rules, limits) are read from the
tables of ``documented`` ([METRICS], [SIZES], [PERF] there). No Django, no I/O: frozen
dataclasses in, numbers out.

A value CloudWatch did not return is ``None`` and stays ``None`` through every derivation:
a gap is never read as zero (docs/architecture.md, "Missing is not zero").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from .documented import LIMITS, METERING, ModeLimits, Table, value

KIB = 1024
MIB = 1024 * 1024
GIB = 1024**3
TIB = 1024**4


@dataclass(frozen=True)
class Sample:
    """One file system's metrics for one period (a wide row), as CloudWatch returned them.

    ``*_bytes`` are the ``Sum`` of the IOBytes metric over the period and ``*_count`` its
    ``SampleCount`` (the number of operations) [2]; Average is Sum / SampleCount and is never
    requested. ``permitted_throughput`` is bytes/s: at a 60 s period its Sum (the console's
    formula) and its Average are the same single value, and the Average stays right for longer
    periods [3], so that is the statistic collected. ``None`` means CloudWatch sent nothing.
    """

    timestamp: datetime
    period_s: int = 60
    data_read_bytes: float | None = None  # DataReadIOBytes Sum
    data_read_count: float | None = None  # DataReadIOBytes SampleCount
    data_write_bytes: float | None = None  # DataWriteIOBytes Sum
    data_write_count: float | None = None  # DataWriteIOBytes SampleCount
    metadata_bytes: float | None = None  # MetadataIOBytes Sum
    metadata_count: float | None = None  # MetadataIOBytes SampleCount
    metadata_read_bytes: float | None = None  # MetadataReadIOBytes Sum
    metadata_read_count: float | None = None  # MetadataReadIOBytes SampleCount
    metadata_write_bytes: float | None = None  # MetadataWriteIOBytes Sum
    metadata_write_count: float | None = None  # MetadataWriteIOBytes SampleCount
    total_bytes: float | None = None  # TotalIOBytes Sum
    total_count: float | None = None  # TotalIOBytes SampleCount
    metered_bytes: float | None = None  # MeteredIOBytes Sum
    percent_io_limit: float | None = None  # PercentIOLimit Maximum
    burst_credit_balance: float | None = None  # BurstCreditBalance Minimum, bytes
    permitted_throughput: float | None = None  # PermittedThroughput Average, bytes/s
    client_connections: float | None = None  # ClientConnections Sum
    storage_total_bytes: float | None = None  # StorageBytes Average, StorageClass=Total
    storage_standard_bytes: float | None = None  # StorageBytes Average, StorageClass=Standard
    storage_ia_bytes: float | None = None  # StorageBytes Average, StorageClass=IA

    def has_data(self) -> bool:
        """True when CloudWatch returned at least one value for this period."""
        return any(getattr(self, name) is not None for name in VALUE_FIELDS)


VALUE_FIELDS: tuple[str, ...] = tuple(
    name for name in Sample.__dataclass_fields__ if name not in ("timestamp", "period_s")
)
_GAPS: dict[str, float | None] = dict.fromkeys(VALUE_FIELDS)


def sample_of(timestamp: datetime, period_s: int, values: dict[str, float | None]) -> Sample:
    """``Sample(timestamp, period_s, **values)``, built without the dataclass's ``__init__``:
    a frozen dataclass sets each of its 22 fields through ``object.__setattr__``, three times
    the cost of this, for the hundreds of thousands of rows a collection cycle reads and
    writes. ``values`` must hold only ``VALUE_FIELDS`` names (the rest are gaps, None)."""
    sample = object.__new__(Sample)
    state = sample.__dict__
    state["timestamp"] = timestamp
    state["period_s"] = period_s
    state.update(_GAPS)
    state.update(values)
    return sample


#: Samples column by column (``history.load_columns``, ``columns_of``): ``"ts"`` (Unix
#: seconds), ``"period_s"`` and value fields, each a list with one entry per sample, in order.
#: A field that was not read is absent (its values are gaps).
Columns = Mapping[str, Sequence]


def columns_of(samples: Sequence[Sample]) -> dict[str, list]:
    """``samples`` as ``Columns`` (every value field)."""
    return {
        "ts": [int(s.timestamp.timestamp()) for s in samples],
        "period_s": [s.period_s for s in samples],
        **{name: [getattr(s, name) for s in samples] for name in VALUE_FIELDS},
    }


def samples_of(columns: Columns) -> list[Sample]:
    """``Columns`` as samples (the fields not there are gaps)."""
    fields = [name for name in columns if name in _GAPS]
    return [
        sample_of(datetime.fromtimestamp(ts, UTC), period, dict(zip(fields, values, strict=True)))
        for ts, period, *values in zip(
            columns["ts"], columns["period_s"], *(columns[f] for f in fields), strict=True
        )
    ]


# --- Per-minute rates (the console's metric math [3]) -------------------------------------


def per_second(count: float | None, period_s: int) -> float | None:
    """Operations per second = SampleCount / seconds in the period [3]."""
    return None if count is None else count / period_s


def mib_per_second(sum_bytes: float | None, period_s: int) -> float | None:
    """Throughput in MiB/s = (Sum / 1048576) / PERIOD [3]."""
    return None if sum_bytes is None else sum_bytes / MIB / period_s


def average_op_kib(sum_bytes: float | None, count: float | None) -> float | None:
    """Average I/O size in KiB = (Sum / 1024) / SampleCount [3]; None with no operations."""
    if sum_bytes is None or not count:
        return None
    return sum_bytes / KIB / count


@dataclass(frozen=True)
class OpSizes:
    """Average request sizes (KiB) over some samples, ``None`` where there were no requests,
    and the metering minimums they are held against (data 32 KiB, metadata 4 KiB [METRICS])."""

    read_kib: float | None
    write_kib: float | None
    metadata_kib: float | None
    data_minimum_kib: float
    metadata_minimum_kib: float

    @property
    def small(self) -> list[str]:
        """The kinds whose average is under their metering minimum: requests that small are
        metered, and billed by Elastic, as the minimum, so they cost more than their bytes."""
        kinds = (
            ("read", self.read_kib, self.data_minimum_kib),
            ("write", self.write_kib, self.data_minimum_kib),
            ("metadata", self.metadata_kib, self.metadata_minimum_kib),
        )
        return [name for name, kib, least in kinds if kib is not None and kib < least]


def op_sizes(samples: Sequence[Sample], metering: Table = METERING) -> OpSizes:
    """Average read, write and metadata request sizes over ``samples`` (gaps skipped):
    the Sums added over the SampleCounts added, the console's formula [3] on a longer period."""
    return op_sizes_of(columns_of(samples), metering)


def op_sizes_of(columns: Columns, metering: Table = METERING) -> OpSizes:
    """``op_sizes`` of samples read as ``Columns``."""

    def average(of_bytes: str, of_count: str) -> float | None:
        pairs = [
            (b, n)
            for b, n in zip(columns.get(of_bytes, ()), columns.get(of_count, ()), strict=True)
            if b is not None and n
        ]
        return average_op_kib(sum(b for b, _ in pairs), sum(n for _, n in pairs)) if pairs else None

    return OpSizes(
        average("data_read_bytes", "data_read_count"),
        average("data_write_bytes", "data_write_count"),
        average("metadata_bytes", "metadata_count"),
        value(metering, "data_minimum_bytes") / KIB,
        value(metering, "metadata_minimum_bytes") / KIB,
    )


def permitted_mibps(sample: Sample) -> float | None:
    """PermittedThroughput in MiB/s (``e2 = m2/1048576`` at a one-minute period [3])."""
    return bytes_in_mib(sample.permitted_throughput)


def bytes_in_mib(value: float | None) -> float | None:
    return None if value is None else value / MIB


def throughput_utilisation_pct(sample: Sample) -> float | None:
    """Percentage of permitted throughput used: metered MiB/s * 100 / permitted MiB/s [3]."""
    return utilisation_pct(
        mib_per_second(sample.metered_bytes, sample.period_s), permitted_mibps(sample)
    )


def utilisation_pct(metered_mibps: float | None, permitted_mibps: float | None) -> float | None:
    """Metered MiB/s * 100 / permitted MiB/s [3]; None without both (or with nothing permitted)."""
    if metered_mibps is None or not permitted_mibps:
        return None
    return metered_mibps * 100.0 / permitted_mibps


def connections_per_minute(connections: float | None, period_s: int) -> float | None:
    """ClientConnections is a Sum over the period: the per-minute average."""
    return None if connections is None else connections * 60 / period_s


@dataclass(frozen=True)
class MinuteFigures:
    """What a chart, the API or a table shows for one sample; ``None`` is a gap."""

    timestamp: datetime
    read_ops: float | None
    write_ops: float | None
    metadata_ops: float | None
    total_ops: float | None
    read_mibps: float | None
    write_mibps: float | None
    metadata_mibps: float | None
    total_mibps: float | None
    metered_mibps: float | None
    permitted_mibps: float | None
    average_read_kib: float | None
    average_write_kib: float | None
    average_metadata_kib: float | None
    io_limit_pct: float | None
    throughput_utilisation_pct: float | None
    burst_credit_balance: float | None
    client_connections: float | None


def minute_figures(sample: Sample) -> MinuteFigures:
    """Every per-minute derivation of ``sample`` at once."""
    columns = figure_columns([sample])
    return MinuteFigures(timestamp=sample.timestamp, **{k: v[0] for k, v in columns.items()})


def figure_columns(samples: Sequence[Sample]) -> dict[str, list[float | None]]:
    """``minute_figures`` of many samples, column by column: MinuteFigures attribute -> its
    value for each sample, in order."""
    return figures_of(columns_of(samples))


def figures_of(columns: Columns) -> dict[str, list[float | None]]:
    """``figure_columns`` of samples read as ``Columns``: a chart of a thousand points reads
    these, each worked out over whole lists (one ``map`` a figure), not sample by sample."""
    periods = columns["period_s"]
    gaps = [None] * len(periods)

    def of(name: str) -> Sequence:
        return columns.get(name, gaps)

    def rates(name: str, unit) -> list[float | None]:
        return list(map(unit, of(name), periods))

    def sizes(of_bytes: str, of_count: str) -> list[float | None]:
        return list(map(average_op_kib, of(of_bytes), of(of_count)))

    metered = rates("metered_bytes", mib_per_second)
    permitted = list(map(bytes_in_mib, of("permitted_throughput")))
    return {
        "read_ops": rates("data_read_count", per_second),
        "write_ops": rates("data_write_count", per_second),
        "metadata_ops": rates("metadata_count", per_second),
        "total_ops": rates("total_count", per_second),
        "read_mibps": rates("data_read_bytes", mib_per_second),
        "write_mibps": rates("data_write_bytes", mib_per_second),
        "metadata_mibps": rates("metadata_bytes", mib_per_second),
        "total_mibps": rates("total_bytes", mib_per_second),
        "metered_mibps": metered,
        "permitted_mibps": permitted,
        "average_read_kib": sizes("data_read_bytes", "data_read_count"),
        "average_write_kib": sizes("data_write_bytes", "data_write_count"),
        "average_metadata_kib": sizes("metadata_bytes", "metadata_count"),
        "io_limit_pct": list(of("percent_io_limit")),
        "throughput_utilisation_pct": list(map(utilisation_pct, metered, permitted)),
        "burst_credit_balance": list(of("burst_credit_balance")),
        "client_connections": rates("client_connections", connections_per_minute),
    }


# --- Metering ([METRICS], [SIZES] in ``documented``) ---------------------------------------


def billed_request_bytes(size_bytes: float, *, metadata: bool = False, metering: Table = METERING):
    """Bytes one request counts as in ``TotalIOBytes`` and Elastic's bill: at least 32 KiB for
    a data operation and 4 KiB for a metadata one, then rounded up to the next KiB [METRICS]
    [SIZES]. (The 2018 rule counted every request as at least 4 KiB: ``METERING_2018``.)"""
    if size_bytes < 0:
        raise ValueError("a request cannot have a negative size")
    least = value(metering, "metadata_minimum_bytes" if metadata else "data_minimum_bytes")
    step = value(metering, "increment_bytes") or 1.0
    return max(least, math.ceil(size_bytes / step) * step)


def metered_request_bytes(
    size_bytes: float, *, is_read: bool = False, metadata: bool = False, metering: Table = METERING
) -> float:
    """Bytes one request counts as in ``MeteredIOBytes`` (the throughput meter): its billed
    size, a read's divided by the read discount, up to 3 [PERF]. That the discount applies
    after the minimum is inference: ``MeteredIOBytes`` is documented as ``TotalIOBytes``'
    operations "with read operations discounted"."""
    billed = billed_request_bytes(size_bytes, metadata=metadata, metering=metering)
    return billed / value(metering, "read_discount") if is_read else billed


def metered_mibps(read_mibps: float, other_mibps: float, *, metering: Table = METERING) -> float:
    """Metered throughput of large requests: 30 MiB/s read + 30 MiB/s write meter as 40 [SIZES];
    reads are metered at up to a third, so this is the least it can be."""
    return read_mibps / value(metering, "read_discount") + other_mibps


def requests_per_second_at(
    throughput_mibps: float, request_bytes: float, *, metering: Table = METERING
) -> float:
    """How many data write requests of ``request_bytes`` fit in a metered throughput: 3,200
    4 KiB writes per second at 100 MiB/s, each counted as 32 KiB (25,600 under the 2018 rule)."""
    return throughput_mibps * MIB / metered_request_bytes(request_bytes, metering=metering)


# --- Bursting mode rates ([PERF]) ---------------------------------------------------------


def baseline_mibps(standard_bytes: float, limits: Table = LIMITS) -> float:
    """Bursting-mode baseline from the Standard-class size: 50 KiB/s per GiB, at least 1 MiB/s.

    100 GiB gives 5,000 KiB/s = 4.88 MiB/s, the seed's "5 MiB/s" [PERF].
    """
    if standard_bytes < 0:
        raise ValueError("storage size cannot be negative")
    kibps = standard_bytes / GIB * value(limits, "bursting.baseline_kibps_per_gib")
    return max(value(limits, "bursting.baseline_minimum_mibps"), kibps / KIB)


def burst_mibps(standard_bytes: float, limits: Table = LIMITS) -> float:
    """Bursting-mode burst rate: 100 MiB/s, or 100 MiB/s per TiB of Standard above 1 TiB [PERF]."""
    if standard_bytes < 0:
        raise ValueError("storage size cannot be negative")
    per_tib = value(limits, "bursting.burst_mibps_per_tib")
    return max(value(limits, "bursting.burst_minimum_mibps"), standard_bytes / TIB * per_tib)


def capped_slowdown(demand_mibps: float, permitted_mibps: float, *, io_share: float = 1.0) -> float:
    """How many times longer a job takes when its throughput is capped at ``permitted_mibps``.

    ``io_share`` is the part of the job's time spent waiting on the file system (1.0: all of
    it); the rest does not slow down. When credits run out, permitted falls to baseline [6].
    """
    if permitted_mibps <= 0:
        raise ValueError("permitted throughput must be positive")
    if not 0.0 <= io_share <= 1.0:
        raise ValueError("io_share is a fraction between 0 and 1")
    io_factor = max(1.0, demand_mibps / permitted_mibps)
    return (1.0 - io_share) + io_share * io_factor


# --- General Purpose I/O limit -------------------------------------------------------------


def estimated_io_limit_pct(read_ops: float, write_ops: float, limits: ModeLimits) -> float:
    """Share of a General Purpose file system's I/O budget used, from its documented limits
    (``documented.mode_limits``: 35,000 reads or 7,000 writes a second for a bursting one).

    Each read costs 1/read_iops and each write 1/write_iops of the per-second budget (re:Post
    "a read costing one and a write five" at 35,000/7,000; metadata reads counted as reads and
    metadata writes as writes: inference). A model for planning and the demo; the measured
    PercentIOLimit is the figure to alert on. (The seed's ceilings were 3,500 reads or 3,000
    writes, 2018's.)
    """
    return 100.0 * (read_ops / limits.read_iops + write_ops / limits.write_iops)


def implied_ops_limit(ops_per_s: float, percent_io_limit: float) -> float | None:
    """The ops/s at 100 % implied by a measured rate and its PercentIOLimit.

    The seed's 2,880 ops/s at 84 % implies about 3,430 ops/s. At exactly 100 % the limit is
    the rate itself, to the last bit: ``ops / (pct / 100)`` divides by 1.0 there, where
    ``ops * 100 / pct`` rounded twice (3638.933333333333 against 3638.9333333333334).
    """
    if percent_io_limit <= 0:
        return None
    return ops_per_s / (percent_io_limit / 100.0)


def ops_headroom(ops_per_s: float, percent_io_limit: float) -> float | None:
    """Further ops/s the file system can take before PercentIOLimit reaches 100 %."""
    limit = implied_ops_limit(ops_per_s, percent_io_limit)
    return None if limit is None else max(0.0, limit - ops_per_s)


# --- Small helpers shared by the verdict and advice ----------------------------------------


def percentile(values: list[float], pct: float) -> float:
    """Linear-interpolation percentile (numpy's default) of a non-empty list."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)

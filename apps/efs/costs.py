"""What one EFS file system would cost a month in each throughput mode (bursting, Elastic,
provisioned), and whether each mode would have carried its workload without throttling.

Pure: no Django, no I/O. The database side (``history.usage``) hands in hourly totals and the
p95 and peak of the per-minute metered throughput; ``workload_from`` turns them into a month.

The units and the prices' sources are the comment above ``GB_BYTES``; the comparison's place in
the pricing flow is in docs/architecture.md ("Vendor figures are data").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from apps.lib.formats import mibps
from apps.lib.prices import overridden

from . import documented
from .documented import LIMITS, METERING, Table, credit_cap_bytes, mode_limits
from .metrics import GIB, MIB, baseline_mibps, burst_mibps

# Units, explicitly:
#
# - AWS's price pages say "GB". Its bills count usage in byte-hours and turn them into GB by
#   dividing by 1024^3, so a billed GB is 2^30 bytes, a GiB [P3]. ``GB_BYTES`` is that, and
#   every "GB" on the page and in the API means 2^30 bytes. (Were a GB 10^9 bytes, storage and
#   Elastic transfer would cost 7.4 % more.)
# - Provisioned throughput is set in MiB/s (the API's ``ProvisionedThroughputInMibps``) and
#   priced per "MB/s-month": one priced MB/s is one MiB/s.
# - A month is AWS's average month, 730 hours (8,760 h / 12); usage from a shorter window is
#   scaled to it.
# - Elastic bills bytes read and written [P1], "metadata reads as read operations and metadata
#   writes as write operations", each data operation as at least 32 KiB and each metadata one as
#   at least 4 KiB, then per KiB ([SIZES] and [METRICS] in ``documented``; 2018's rule was 4 KiB
#   for every request, which understated small data requests up to 8x). From a minute's Sum and
#   SampleCount the bill is ``max(Sum, SampleCount x minimum)``: exact when CloudWatch's Sum
#   already counts the minimums (as ``TotalIOBytes`` is documented to), a floor when it does not
#   (the per-KiB rounding of single requests cannot be seen). Metadata whose split into reads
#   and writes CloudWatch did not give (MetadataReadIOBytes, MetadataWriteIOBytes: minutes kept
#   from before they were collected) is billed as reads, a floor, and the reason says so.
# - IA and Archive access charges (per GB read from those classes) are not included: CloudWatch
#   does not say which class a read came from.
#
# Sources (read 2026-11-24 through the ``search`` tool; the page itself is a JavaScript table):
#
# - [P1] AWS, "Amazon EFS pricing", https://aws.amazon.com/efs/pricing/, Regional (Multi-AZ)
#   file systems, US East (N. Virginia). Since 2023-11-27 the page has two tables (as quoted
#   that day by https://blog.gslin.org/archives/tag/tiering/): "with Elastic Throughput":
#   Standard $0.30, Infrequent Access $0.016, Archive $0.008 per GB-month, reads $0.03 and
#   writes $0.06 per GB transferred; "with legacy throughput modes" (bursting, provisioned):
#   Standard $0.30, Infrequent Access $0.025 per GB-month, Provisioned Throughput $6.00 per
#   MB/s-month. Standard $0.30, Elastic $0.03/$0.06 and provisioned $6.00 are also the figures
#   of issue 16 and of 2026 summaries (sst.dev's EFS component, factualminds.com); the latter
#   quotes Archive at $0.0036, which Vigil does not use (unconfirmed by AWS text).
# - [P2] AWS, "Managing file system throughput", https://docs.aws.amazon.com/efs/latest/ug/
#   managing-throughput.html: bursting "supports bursting to higher levels for up to 12 hours
#   per day".
# - [P3] GB = 2^30 bytes in AWS billing: the EBS/EFS usage records are byte-hours divided by
#   1024^3 (a worked answer quoted in the search index), and Wasabi's billing page "follows the
#   AWS convention of using the GB ... terms even when using base-2". Secondary sources.
# - [ARCH] "The Archive storage class is available only for file systems that use the Elastic
#   throughput mode" (PutLifecycleConfiguration, https://docs.aws.amazon.com/efs/latest/ug/
#   API_PutLifecycleConfiguration.html, read 2026-11-26): a file system holding Archive data is
#   offered Elastic only; bursting and provisioned are shown as not available.
# - The bursting rules (baseline 50 KiB/s per GiB of Standard, at least 1 MiB/s; burst 100 MiB/s
#   or 100 MiB/s per TiB; credits held up to 2.1 TiB, or 2.1 TiB per TiB of Standard above
#   1 TiB; provisioned pays only above the baseline) are ``documented.LIMITS`` [PERF]. The credit
#   balance is taken as full at the start of the window.
# - One Zone file systems have their own storage prices; the table has none (unverified), so
#   their comparison uses the Regional ones and says so, unless ``VIGIL_EFS_PRICES`` gives
#   ``one_zone_standard`` and ``one_zone_ia``.
#
# A region missing from the table falls back to us-east-1's prices, and the comparison says so
# in ``prices_note`` (shown on the page and in the API), never silently. ``VIGIL_EFS_PRICES``
# adds regions or overrides prices (``price_table``).

GB_BYTES = GIB  # one billed "GB" (see above)
MONTH_HOURS = 730.0
#: Less data than this and no comparison is made.
MIN_HOURS = 1.0
MODES = ("bursting", "elastic", "provisioned")
FALLBACK_REGION = "us-east-1"


@dataclass(frozen=True)
class RegionPrices:
    """Dollars: storage per GB-month, Elastic transfer per GB, provisioned per MiB/s-month."""

    standard: float
    ia: float  # Infrequent Access, with Elastic throughput
    legacy_ia: float  # Infrequent Access, with bursting or provisioned throughput
    elastic_read: float
    elastic_write: float
    provisioned: float
    archive: float | None = None  # Elastic throughput only
    source: str = ""
    one_zone_standard: float | None = None  # One Zone file systems' storage, when known
    one_zone_ia: float | None = None


PRICES: dict[str, RegionPrices] = {
    "us-east-1": RegionPrices(
        standard=0.30,
        ia=0.016,
        legacy_ia=0.025,
        archive=0.008,
        elastic_read=0.03,
        elastic_write=0.06,
        provisioned=6.00,
        source="https://aws.amazon.com/efs/pricing/ (Regional, us-east-1; 2023-11-27 tables, "
        "checked 2026-11-24)",
    ),
}
_FIELDS = {
    "standard",
    "ia",
    "legacy_ia",
    "archive",
    "elastic_read",
    "elastic_write",
    "provisioned",
    "source",
    "one_zone_standard",
    "one_zone_ia",
}
_REQUIRED = {"standard", "ia", "elastic_read", "elastic_write", "provisioned"}


def price_table(overrides: Mapping[str, object] | None = None) -> dict[str, RegionPrices]:
    """The built-in table with ``overrides`` applied (``VIGIL_EFS_PRICES``):
    ``{"eu-west-1": {"standard": 0.33, "ia": 0.0175, ...}}``. A region already in the table
    takes any subset of the fields; a new one needs at least standard, ia, elastic_read,
    elastic_write and provisioned (legacy_ia defaults to ia). ValueError names what is wrong."""
    return overridden(PRICES, overrides, fields=_FIELDS, required=_REQUIRED, new=_new_region)


def _new_region(given: dict[str, object]) -> RegionPrices:
    given.setdefault("legacy_ia", given["ia"])
    given.setdefault("source", "VIGIL_EFS_PRICES")
    return RegionPrices(**given)


def prices_for(region: str, table: Mapping[str, RegionPrices]) -> tuple[str, RegionPrices, str]:
    """(region whose prices apply, the prices, a note when they are not ``region``'s own)."""
    if region in table:
        return region, table[region], ""
    note = (
        f"no EFS prices for {region} in Vigil's table: {FALLBACK_REGION} prices shown "
        f"(add {region} to VIGIL_EFS_PRICES)"
    )
    return FALLBACK_REGION, table[FALLBACK_REGION], note


# --- The workload ---------------------------------------------------------------------------


@dataclass(frozen=True)
class HourTotals:
    """One hour of a file system (from its minute rows or its hour row); ``minutes`` is how
    many of its minutes had MeteredIOBytes. Bytes are summed over those minutes."""

    minutes: int
    metered_bytes: float
    #: Billed reads: data reads (each at least 32 KiB) and metadata reads (4 KiB).
    read_bytes: float = 0.0
    #: Billed writes: data writes (each at least 32 KiB) and metadata writes (4 KiB).
    write_bytes: float = 0.0
    #: Of ``read_bytes``, metadata CloudWatch did not split into reads and writes.
    unsplit_metadata_bytes: float = 0.0


def billed_bytes(
    sum_bytes: float | None, count: float | None, minimum_bytes: float | None = None
) -> float:
    """Bytes Elastic bills for ``count`` requests moving ``sum_bytes``: at least
    ``minimum_bytes`` each (a data operation's 32 KiB by default; 4 KiB for metadata).
    Over a period this is a floor of the true figure (it cannot see single requests)."""
    if minimum_bytes is None:
        minimum_bytes = documented.value(METERING, "data_minimum_bytes")
    return max(sum_bytes or 0.0, (count or 0.0) * minimum_bytes)


@dataclass(frozen=True)
class Workload:
    """A month of one file system as the cost model needs it: sizes and transfer in billed
    GB (2^30 bytes), throughput in metered MiB/s."""

    standard_gib: float
    read_gib: float = 0.0
    write_gib: float = 0.0
    p95_mibps: float = 0.0
    peak_mibps: float = 0.0
    mean_mibps: float | None = None
    ia_gib: float = 0.0
    archive_gib: float = 0.0
    hours_of_data: float = MONTH_HOURS
    #: The largest net credit drain over the window (GiB), or None when unknown.
    drain_gib: float | None = None
    #: Of ``read_gib``, metadata without the read/write split (billed as reads: a floor).
    unsplit_metadata_gib: float = 0.0


def workload_from(
    hours: Sequence[HourTotals],
    p95_mibps: float,
    peak_mibps: float,
    *,
    standard_bytes: float,
    ia_bytes: float = 0.0,
    archive_bytes: float = 0.0,
    limits: Table = LIMITS,
) -> Workload | None:
    """A month from ``hours`` (in time order; gaps are simply absent), or None with less
    than ``MIN_HOURS`` of data. Transfer is scaled from the hours that had data to 730 h."""
    minutes = sum(h.minutes for h in hours)
    if minutes < MIN_HOURS * 60:
        return None
    covered_h = minutes / 60
    scale = MONTH_HOURS / covered_h
    mean = sum(h.metered_bytes for h in hours) / (minutes * 60) / MIB
    return Workload(
        standard_gib=standard_bytes / GIB,
        read_gib=sum(h.read_bytes for h in hours) * scale / GB_BYTES,
        write_gib=sum(h.write_bytes for h in hours) * scale / GB_BYTES,
        p95_mibps=p95_mibps,
        peak_mibps=peak_mibps,
        mean_mibps=mean,
        ia_gib=ia_bytes / GIB,
        archive_gib=archive_bytes / GIB,
        hours_of_data=covered_h,
        drain_gib=credit_drain(hours, baseline_mibps(standard_bytes, limits)) / GIB,
        unsplit_metadata_gib=sum(h.unsplit_metadata_bytes for h in hours) * scale / GB_BYTES,
    )


def credit_drain(hours: Sequence[HourTotals], baseline: float) -> float:
    """The largest net drain of burst credits (bytes) over ``hours`` at ``baseline`` MiB/s:
    the deepest fall of the running balance below its highest point. Starting full, the
    balance runs out exactly when this exceeds the balance. Hours without data neither earn
    nor spend; within an hour the drain cannot exceed the burst rate less the baseline for an
    hour (50 MiB/s per TiB: 176 GiB per TiB of Standard), far below a full balance (2.1 TiB
    per TiB), so hourly totals suffice."""
    level = high = deepest = 0.0
    for h in hours:
        level += baseline * MIB * 60 * h.minutes - h.metered_bytes
        high = max(high, level)
        deepest = max(deepest, high - level)
    return deepest


# --- The comparison ------------------------------------------------------------------------


class ModeCost(NamedTuple):
    mode: str
    monthly_usd: float
    fits: bool


@dataclass(frozen=True)
class ModeRow:
    """One mode of the comparison; ``why`` is its part of the reason, in words."""

    mode: str
    monthly_usd: float
    fits: bool
    storage_usd: float
    throughput_usd: float
    why: str
    available: bool = True
    provisioned_mibps: float | None = None


@dataclass(frozen=True)
class Comparison:
    """The modes cheapest first; ``best`` is the cheapest that fits (None if none does)."""

    rows: tuple[ModeRow, ...]
    workload: Workload
    region: str
    prices_region: str
    prices_note: str = ""
    provision: str = "peak"
    current_mode: str | None = None
    current_usd: float | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def best(self) -> ModeRow | None:
        return next((r for r in self.rows if r.fits and r.available), None)

    @property
    def saving_usd(self) -> float | None:
        """What the best mode saves a month against the current one (0 if it is the best)."""
        if self.best is None or self.current_usd is None:
            return None
        return max(0.0, self.current_usd - self.best.monthly_usd)

    @property
    def current_fits(self) -> bool | None:
        """Whether the mode it is in now carries the workload (None: mode unknown)."""
        row = next((r for r in self.rows if r.mode == self.current_mode), None)
        return None if row is None else row.fits

    @property
    def extra_usd(self) -> float | None:
        """What the best mode costs a month more than now, when now throttles and is cheaper."""
        if self.best is None or self.current_usd is None:
            return None
        more = self.best.monthly_usd - self.current_usd
        return more if more > 0 else None

    @property
    def reason(self) -> str:
        ordered = sorted(self.rows, key=lambda r: r is not self.best)
        text = "; ".join(r.why for r in ordered if r.why)
        text = text[:1].upper() + text[1:]
        if self.workload.hours_of_data < MONTH_HOURS * 0.9:
            text += (
                f" (from {_hours_label(self.workload.hours_of_data)} of data, scaled to a month)"
            )
        return text

    def tuples(self) -> list[ModeCost]:
        return [ModeCost(r.mode, round(r.monthly_usd, 2), r.fits) for r in self.rows]


def compare(
    workload: Workload,
    region: str,
    *,
    table: Mapping[str, RegionPrices] | None = None,
    provision: str = "peak",
    price_per_mibps: float | None = None,
    performance_mode: str = "generalPurpose",
    current_mode: str | None = None,
    current_provisioned_mibps: float | None = None,
    file_system_type: str = "regional",
    limits: Table = LIMITS,
) -> Comparison:
    """Each mode's monthly cost and fit for ``workload`` in ``region``, cheapest first.

    ``provision`` is "peak" or "p95": the metered throughput a provisioned file system would
    be set to (rounded up to a whole MiB/s). At the peak it carries the workload; at the p95
    it is cheaper but throttles the busiest minutes, so it never "fits" when they are higher.
    ``price_per_mibps`` overrides the table's provisioned price. ``current_mode`` (and its
    provisioned MiB/s) prices what it costs now. ``file_system_type`` (``regional`` or
    ``one_zone``) and ``region`` choose Elastic's documented throughput limit and the storage
    prices; ``limits`` is ``documented.LIMITS`` with ``VIGIL_EFS_LIMITS`` applied.
    """
    if provision not in ("p95", "peak"):
        raise ValueError("provision at the p95 or the peak")
    prices_region, prices, note = prices_for(region, table or PRICES)
    if price_per_mibps is not None:
        prices = replace(prices, provisioned=price_per_mibps)
    notes: list[str] = []
    if file_system_type == "one_zone":
        prices = _one_zone(prices, prices_region, notes)
    w = workload
    base = baseline_mibps(w.standard_gib * GIB, limits)
    legacy_storage = (w.standard_gib * prices.standard) + w.ia_gib * prices.legacy_ia
    archived = w.archive_gib > 0
    if w.unsplit_metadata_gib > 0.05:
        notes.append(
            f"{_gb(w.unsplit_metadata_gib)} of metadata a month without the read/write split is "
            "billed as reads (a floor: metadata writes cost twice as much)"
        )
    ceiling = mode_limits(limits, file_system_type, "elastic", region).write_mibps
    rows = _rows(w, prices, base, legacy_storage, provision, performance_mode, ceiling, limits)
    current_usd = _current_usd(
        rows, current_mode, current_provisioned_mibps, archived, legacy_storage, prices, base
    )
    return Comparison(
        rows=tuple(rows),
        workload=w,
        region=region,
        prices_region=prices_region,
        prices_note=note,
        provision=provision,
        current_mode=current_mode,
        current_usd=current_usd,
        notes=tuple(notes),
    )


def _rows(
    w: Workload,
    prices: RegionPrices,
    base: float,
    legacy_storage: float,
    provision: str,
    performance_mode: str,
    elastic_ceiling: float,
    limits: Table,
) -> list[ModeRow]:
    """Each mode's row, those available first, cheapest first, ties in ``MODES`` order. With
    data in Archive only Elastic is available: AWS allows that class with it alone."""
    elastic = _elastic_row(w, prices, performance_mode, elastic_ceiling)
    level = float(max(1, math.ceil(w.p95_mibps if provision == "p95" else w.peak_mibps)))
    provisioned = _provisioned_row(level, base, w, prices.provisioned, legacy_storage, provision)
    bursting = _bursting_row(w, base, w.standard_gib * GIB, legacy_storage, limits)
    if w.archive_gib > 0:
        bursting = replace(bursting, fits=False, available=False)
        provisioned = replace(provisioned, fits=False, available=False, why="")
    order = {m: i for i, m in enumerate(MODES)}
    return sorted(
        (bursting, elastic, provisioned),
        key=lambda r: (not r.available, round(r.monthly_usd, 6), order[r.mode]),
    )


def _current_usd(
    rows: Sequence[ModeRow],
    current_mode: str | None,
    current_provisioned_mibps: float | None,
    archived: bool,
    legacy_storage: float,
    prices: RegionPrices,
    base: float,
) -> float | None:
    """What the file system costs a month in its ``current_mode`` (a provisioned one at its
    own level), or None when unknown or impossible."""
    if archived and current_mode in ("bursting", "provisioned"):
        return None  # cannot be: AWS allows Archive only with Elastic
    if current_mode == "provisioned" and current_provisioned_mibps:
        return legacy_storage + prices.provisioned * max(0.0, current_provisioned_mibps - base)
    if current_mode in MODES:
        return {r.mode: r.monthly_usd for r in rows if r.available}.get(current_mode)
    return None


def _one_zone(prices: RegionPrices, prices_region: str, notes: list[str]) -> RegionPrices:
    """One Zone storage prices in place of Regional ones (a note when the table has none)."""
    if prices.one_zone_standard is None:
        notes.append(
            "no One Zone storage prices in Vigil's table: Regional ones shown "
            f"(add one_zone_standard and one_zone_ia for {prices_region} to VIGIL_EFS_PRICES)"
        )
        return prices
    one_zone_ia = prices.one_zone_ia if prices.one_zone_ia is not None else prices.ia
    return replace(prices, standard=prices.one_zone_standard, ia=one_zone_ia, legacy_ia=one_zone_ia)


def _elastic_row(
    w: Workload, prices: RegionPrices, performance_mode: str, ceiling: float
) -> ModeRow:
    """Elastic: storage (Archive too) plus the bytes transferred; capped at its write limit."""
    storage = w.standard_gib * prices.standard + w.ia_gib * prices.ia
    storage += w.archive_gib * (prices.archive if prices.archive is not None else prices.ia)
    transfer = w.read_gib * prices.elastic_read + w.write_gib * prices.elastic_write
    available = performance_mode == "generalPurpose"
    fits = available and w.peak_mibps <= ceiling
    if not available:
        why = "Elastic is not available with Max I/O"
    else:
        why = (
            f"Elastic would cost {_usd(storage + transfer)}/month for "
            f"{_gb(w.read_gib)} read and {_gb(w.write_gib)} written a month"
        )
        if not fits:
            why += f" but cap the {mibps(w.peak_mibps)} peak"
    return ModeRow("elastic", storage + transfer, fits, storage, transfer, why, available=available)


def _bursting_row(
    w: Workload, base: float, standard_bytes: float, legacy_storage: float, limits: Table
) -> ModeRow:
    """Bursting: storage only; fits when the baseline and the credits carry the workload."""
    burst = burst_mibps(standard_bytes, limits)
    fits, trouble = _bursting_fit(w, base, burst, credit_cap_bytes(standard_bytes, limits))
    if w.archive_gib > 0:
        why = (
            f"bursting and provisioned are not available: it holds {_gb(w.archive_gib)} in "
            "Archive, which AWS allows only with Elastic throughput"
        )
    elif fits:
        mean = w.mean_mibps if w.mean_mibps is not None else w.p95_mibps
        why = (
            f"bursting would cost {_usd(legacy_storage)}/month: its {mibps(base)} baseline "
            f"covers the {mibps(mean)} {'mean' if w.mean_mibps is not None else 'p95'} "
            f"and credits the {mibps(w.peak_mibps)} peak"
        )
    else:
        why = f"bursting ({_usd(legacy_storage)}/month) would throttle: {trouble}"
    return ModeRow("bursting", legacy_storage, fits, legacy_storage, 0.0, why)


def compare_modes(
    region: str,
    standard_gib: float,
    read_gib: float,
    write_gib: float,
    p95_mibps: float,
    peak_mibps: float,
    **options: object,
) -> list[ModeCost]:
    """``(mode, monthly_usd, fits)`` for each mode, cheapest first, for a month of
    ``read_gib``/``write_gib`` billed GB and metered ``p95``/``peak`` MiB/s. Without a mean,
    bursting must have the p95 under its baseline to fit. Options as for ``compare`` and
    ``Workload`` (``mean_mibps``, ``ia_gib``, ``archive_gib``, ``drain_gib``)."""
    workload_keys = {
        "mean_mibps",
        "ia_gib",
        "archive_gib",
        "drain_gib",
        "hours_of_data",
        "unsplit_metadata_gib",
    }
    workload = Workload(
        standard_gib=standard_gib,
        read_gib=read_gib,
        write_gib=write_gib,
        p95_mibps=p95_mibps,
        peak_mibps=peak_mibps,
        **{k: v for k, v in options.items() if k in workload_keys},  # type: ignore[arg-type]
    )
    rest = {k: v for k, v in options.items() if k not in workload_keys}
    return compare(workload, region, **rest).tuples()  # type: ignore[arg-type]


def _provisioned_row(
    level: float, base: float, w: Workload, price: float, storage: float, provision: str
) -> ModeRow:
    throughput = price * max(0.0, level - base)
    permitted = max(level, base)
    fits = w.peak_mibps <= permitted
    what = "the p95" if provision == "p95" else "the peak"
    why = f"provisioning {what} ({level:.0f} MiB/s) would cost {_usd(storage + throughput)}/month"
    if not fits:
        why += f" and throttle the {mibps(w.peak_mibps)} peak"
    return ModeRow(
        "provisioned", storage + throughput, fits, storage, throughput, why, provisioned_mibps=level
    )


def _bursting_fit(w: Workload, base: float, burst: float, cap_bytes: float) -> tuple[bool, str]:
    if w.peak_mibps > burst:
        return False, (f"the {mibps(w.peak_mibps)} peak is above the {mibps(burst)} burst rate")
    if w.mean_mibps is None:
        if w.p95_mibps > base:
            return False, (f"the {mibps(w.p95_mibps)} p95 is above the {mibps(base)} baseline")
    elif w.mean_mibps > base:
        return False, (
            f"the {mibps(w.mean_mibps)} mean is above the {mibps(base)} baseline, "
            "so credits run out"
        )
    if w.drain_gib is not None and w.drain_gib * GIB > cap_bytes:
        return False, (
            f"a burst spent {_gb(w.drain_gib)} of credits, more than the "
            f"{cap_bytes / GIB / 1024:,.1f} TiB it can hold"
        )
    return True, ""


def _usd(value: float) -> str:
    return f"${value:,.2f}" if value < 10 else f"${value:,.0f}"


def _gb(value: float) -> str:
    if value >= 10_000:
        return f"{value / 1024:,.1f} TB"
    return f"{value:,.1f} GB" if value < 10 else f"{value:,.0f} GB"


def _hours_label(hours: float) -> str:
    return f"{hours:.0f} h" if hours < 48 else f"{hours / 24:.0f} days"

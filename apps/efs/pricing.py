"""Which throughput mode should each file system be in: the cost model (``costs``, pure) fed
from the database (``history.usage``), for the file system page and, every
``REFRESH`` hours, for each file system's stored figures (API, ``/metrics``).

The comparison looks at the last 30 days: hourly totals for the transfer Elastic would bill
and for the credit drain, the p95 and peak of the per-minute metered throughput, and the
storage by class that discovery last read (DescribeFileSystems).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction

from . import history
from .costs import MODES, Comparison, compare, price_table, workload_from
from .documented import LIMITS, METERING, merged
from .models import FileSystem, RegionCollection

WINDOW = timedelta(days=30)
#: The figures are recomputed this often (a 30-day window moves slowly; the page is live).
REFRESH = timedelta(hours=6)
#: At least this many file systems are priced per call (``price_region``'s ``spread``).
BATCH_MIN = 20
#: The keys this module owns in ``FileSystem.figures`` (kept when a verdict rewrites them).
FIGURE_KEYS = (
    "costs_at",
    "cost_prices_region",
    "cost_prices_note",
    *(f"cost_{m}_usd" for m in MODES),
    *(f"cost_{m}_fits" for m in MODES),
    "cost_provisioned_mibps",
    "cost_current_usd",
    "cost_best_mode",
    "cost_best_usd",
    "cost_saving_usd",
    "cost_reason",
    "cost_hours_of_data",
)


def limits_table() -> dict:
    """``documented.LIMITS`` with ``VIGIL_EFS_LIMITS`` applied (checked when settings load)."""
    return merged(LIMITS, settings.VIGIL_EFS_LIMITS, "VIGIL_EFS_LIMITS")


def metering_table() -> dict:
    """``documented.METERING`` with ``VIGIL_EFS_METERING`` applied."""
    return merged(METERING, settings.VIGIL_EFS_METERING, "VIGIL_EFS_METERING")


def storage_bytes(fs: FileSystem) -> tuple[float | None, float, float]:
    """(Standard, IA, Archive) bytes: Standard from CloudWatch's latest StorageBytes (what the
    bursting baseline is computed from) or else discovery; IA and Archive from discovery."""
    standard = (fs.figures or {}).get("standard_bytes") or fs.size_standard_bytes
    return standard, float(fs.size_ia_bytes or 0), float(fs.size_archive_bytes or 0)


def comparisons(
    filesystems: list[FileSystem],
    now: datetime,
    *,
    provision: str = "peak",
    price_per_mibps: float | None = None,
    usage: dict | None = None,
) -> dict[int, Comparison]:
    """The comparison of each file system that has a Standard size and an hour of data;
    ``usage`` is ``history.usage`` over ``WINDOW`` when the caller has it already."""
    got = (
        usage
        if usage is not None
        else history.usage(
            [fs.pk for fs in filesystems], now - WINDOW, now, now, metering=metering_table()
        )
    )
    table = price_table(settings.VIGIL_EFS_PRICES)
    limits = limits_table()
    if price_per_mibps is None:
        price_per_mibps = settings.VIGIL_EFS_PRICE_PER_MIBPS_MONTH
    out = {}
    for fs in filesystems:
        standard, ia, archive = storage_bytes(fs)
        if fs.pk not in got or standard is None:
            continue
        hours, p95, peak = got[fs.pk]
        workload = workload_from(
            hours,
            p95,
            peak,
            standard_bytes=standard,
            ia_bytes=ia,
            archive_bytes=archive,
            limits=limits,
        )
        if workload is None:
            continue
        out[fs.pk] = compare(
            workload,
            fs.region.code,
            table=table,
            provision=provision,
            price_per_mibps=price_per_mibps,
            performance_mode=fs.performance_mode,
            current_mode=fs.throughput_mode,
            current_provisioned_mibps=fs.provisioned_mibps,
            file_system_type=fs.file_system_type,
            limits=limits,
        )
    return out


def figures(comparison: Comparison | None, now: datetime) -> dict:
    """The flat figures stored for the API and ``/metrics`` (money in dollars a month)."""
    out: dict = dict.fromkeys(FIGURE_KEYS)
    out["costs_at"] = now.isoformat()
    if comparison is None:
        return out
    c = comparison
    for row in c.rows:
        out[f"cost_{row.mode}_usd"] = round(row.monthly_usd, 2) if row.available else None
        out[f"cost_{row.mode}_fits"] = row.fits
        if row.mode == "provisioned":
            out["cost_provisioned_mibps"] = row.provisioned_mibps
    best = c.best
    out.update(
        cost_prices_region=c.prices_region,
        cost_prices_note=c.prices_note,
        cost_current_usd=None if c.current_usd is None else round(c.current_usd, 2),
        cost_best_mode=best.mode if best else None,
        cost_best_usd=round(best.monthly_usd, 2) if best else None,
        cost_saving_usd=None if c.saving_usd is None else round(c.saving_usd, 2),
        cost_reason=c.reason,
        cost_hours_of_data=round(c.workload.hours_of_data, 1),
    )
    return out


def kept(previous: dict | None) -> dict:
    """The cost figures of ``previous`` figures, for a verdict to carry over."""
    previous = previous or {}
    return {k: previous[k] for k in FIGURE_KEYS if k in previous}


def due(costs_at: object, now: datetime) -> bool:
    """Whether comparison figures made at ``costs_at`` (ISO text, or None) are stale."""
    try:
        return costs_at is None or datetime.fromisoformat(str(costs_at)) <= now - REFRESH
    except ValueError:
        return True


def price_region(
    rc: RegionCollection, now: datetime, *, force: bool = False, spread: timedelta | None = None
) -> int:
    """Store the comparison of the live file systems of the region whose figures are older
    than ``REFRESH`` (all with ``force``), stalest first; how many were priced.

    With ``spread`` (the collection interval) only a share of them is priced per call, so
    that a region's comparisons are spread over the cycles of half a ``REFRESH`` rather than
    costing one cycle the whole region (ranking a week of minutes per file system)."""
    live = FileSystem.objects.filter(region=rc.region, deleted__isnull=True)
    ages = list(live.values_list("pk", "figures__costs_at"))
    stale = sorted((str(at or ""), pk) for pk, at in ages if force or due(at, now))
    if spread is not None and not force:
        share = math.ceil(len(ages) * (spread / (REFRESH / 2)))
        stale = stale[: max(BATCH_MIN, share)]
    if not stale:
        return 0
    chosen = list(live.filter(pk__in=[pk for _, pk in stale]).select_related("region"))
    found = comparisons(chosen, now)
    with transaction.atomic():
        for fs in chosen:
            updated = {**(fs.figures or {}), **figures(found.get(fs.pk), now)}
            FileSystem.objects.filter(pk=fs.pk).update(figures=updated)
    return len(chosen)

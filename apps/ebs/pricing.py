"""A volume's monthly cost and, for gp2, the gp3 advice, from its kept minutes and the price
table (``costs``; ``VIGIL_EBS_PRICES`` over it)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings

from . import history
from .costs import FALLBACK_REGION, Gp3Advice, gp3_advice, monthly_usd, price_table, prices_for
from .metrics import Usage, usage
from .models import Volume


@dataclass(frozen=True)
class Cost:
    monthly_usd: float | None
    prices_region: str
    prices_note: str
    usage: Usage | None
    advice: Gp3Advice | None


def cost(volume: Volume, now: datetime) -> Cost:
    """What the volume costs a month now; for gp2, what it would as gp3 sized for the p95 of
    the last ``VIGIL_EBS_ADVICE_DAYS`` (None without a minute of data)."""
    table = price_table(settings.VIGIL_EBS_PRICES)
    prices, note = prices_for(volume.region.code, table)
    days = timedelta(days=settings.VIGIL_EBS_ADVICE_DAYS)
    samples = history.volume_samples([volume.pk], now - days, now)[volume.pk]
    used = usage(samples)
    advice = None
    if volume.volume_type == "gp2" and used is not None:
        advice = gp3_advice(volume.size_gib, used, prices, note)
    monthly = monthly_usd(
        volume.volume_type, volume.size_gib, volume.iops, volume.throughput_mibps, prices
    )
    return Cost(monthly, volume.region.code if not note else FALLBACK_REGION, note, used, advice)

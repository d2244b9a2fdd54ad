"""When does a burst balance run out: the credit forecast every concern shares.

Pure (no Django, no I/O). A balance (EFS BurstCreditBalance in bytes, EBS BurstBalance or an
instance's EBSIOBalance% in percent) is fitted with a least-squares line over a window (gaps
skipped, so one noisy minute does not move it) and extrapolated to zero; a slope that is not
clearly below zero (within two standard errors) counts as "not draining". The unit is the
caller's: ``drain_per_s`` is in the balance's unit per second.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from apps.lib.formats import rough_duration, span_label

MIB = 1024 * 1024


class CreditState(StrEnum):
    DRAINING = "draining"
    NOT_DRAINING = "not draining"
    EXHAUSTED = "exhausted"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class CreditForecast:
    """The credit trend at ``at``. ``drain_per_s`` is positive when spending, negative when
    earning; ``seconds_to_exhaustion`` is set only when draining (0 when exhausted)."""

    state: CreditState
    at: datetime
    reason: str
    points: int = 0
    balance: float | None = None
    fitted_balance: float | None = None
    drain_per_s: float | None = None
    seconds_to_exhaustion: float | None = None

    # EFS's balance is in bytes: its names for the same figures.
    @property
    def balance_bytes(self) -> float | None:
        return self.balance

    @property
    def drain_bytes_per_s(self) -> float | None:
        return self.drain_per_s

    @property
    def drain_mibps(self) -> float | None:
        return None if self.drain_per_s is None else self.drain_per_s / MIB

    @property
    def exhaustion_at(self) -> datetime | None:
        if self.seconds_to_exhaustion is None:
            return None
        return self.at + timedelta(seconds=self.seconds_to_exhaustion)

    def line(self) -> list[tuple[datetime, float]]:
        """The forecast line for a chart: from the fitted balance now down to zero."""
        if self.fitted_balance is None or self.exhaustion_at is None:
            return []
        return [(self.at, max(0.0, self.fitted_balance)), (self.exhaustion_at, 0.0)]


def credit_forecast(
    points: Sequence[tuple[datetime, float | None]],
    now: datetime,
    *,
    window: timedelta = timedelta(hours=3),
    min_points: int = 10,
    exhausted_bytes: float = 0.0,
) -> CreditForecast:
    """Fit the balance over ``[now - window, now]``, ignoring None, and extrapolate to zero.
    ``exhausted_bytes``: a balance at or under it counts as exhausted (in the balance's unit)."""
    start = now - window
    known = sorted((t, v) for t, v in points if v is not None and start <= t <= now)
    label = span_label(window)
    if not known:
        return CreditForecast(CreditState.UNKNOWN, now, f"no credit balance in the last {label}")
    latest = known[-1][1]
    if latest <= exhausted_bytes:
        return CreditForecast(
            CreditState.EXHAUSTED,
            now,
            "burst credits exhausted",
            points=len(known),
            balance=latest,
            fitted_balance=0.0,
            seconds_to_exhaustion=0.0,
        )
    if len(known) < max(3, min_points):
        return CreditForecast(
            CreditState.UNKNOWN,
            now,
            f"too few credit readings in the last {label} ({len(known)} of {max(3, min_points)})",
            points=len(known),
            balance=latest,
        )
    return _extrapolated(known, now, label)


def _extrapolated(
    known: Sequence[tuple[datetime, float]], now: datetime, label: str
) -> CreditForecast:
    """The forecast from the least-squares line through ``known`` (enough readings, the latest
    above exhaustion): draining only when its slope is clearly below zero."""
    xs = [(t - now).total_seconds() for t, _ in known]
    ys = [v for _, v in known]
    n = len(xs)
    latest = ys[-1]
    fit = _line(xs, ys)
    if fit is None:
        return CreditForecast(
            CreditState.UNKNOWN, now, "credit readings share one timestamp", n, latest
        )
    slope, fitted_now, stderr = fit  # x = 0 is ``now``
    drain = -slope
    if drain <= 2 * stderr or drain <= 0:
        verb = "earning" if slope > 2 * stderr else "flat"
        return CreditForecast(
            CreditState.NOT_DRAINING,
            now,
            f"credits not draining ({verb} over the last {label})",
            points=n,
            balance=latest,
            fitted_balance=fitted_now,
            drain_per_s=drain,
        )
    seconds = max(0.0, fitted_now) / drain
    return CreditForecast(
        CreditState.DRAINING,
        now,
        f"credits run out in {rough_duration(seconds)} at the last {label}'s drain rate",
        points=n,
        balance=latest,
        fitted_balance=fitted_now,
        drain_per_s=drain,
        seconds_to_exhaustion=seconds,
    )


def _line(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float, float] | None:
    """The least-squares line through the points (at least 3): its slope, its value at x = 0
    and the slope's standard error; None when every x is the same."""
    n = len(xs)
    mean_x = sum(xs) / n
    mean_y = sum(ys) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    if sxx == 0:
        return None
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / sxx
    intercept = mean_y - slope * mean_x
    residual = sum((y - (intercept + slope * x)) ** 2 for x, y in zip(xs, ys, strict=True))
    return slope, intercept, math.sqrt(residual / (n - 2) / sxx)

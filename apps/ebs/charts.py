"""A volume page's charts (pure: no Django, no I/O): minutes added up into steps of at most
1,000 points, one x per step of the range, a step with no minute a gap (``None``), never 0."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta

from apps.lib.credits import CreditForecast

from .limits import VOLUME_FIELDS
from .metrics import VolumeSample, figure_columns

MAX_POINTS = 1000
STEPS = (60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600)
#: Sums over a step add up; BurstBalance and the checks take the worst; the rest average.
SUMMED = {"read_ops", "write_ops", "read_bytes", "write_bytes", "read_time", "write_time",
          "idle_time", "consumed_ops"}  # fmt: skip
LOWEST = {"burst_balance"}
HIGHEST = {"stalled", "iops_exceeded", "throughput_exceeded"}

#: key -> (label, figure column, unit)
CHARTS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "iops": (("Read", "read_iops", "ops/s"), ("Write", "write_iops", "ops/s")),
    "mibps": (("Read", "read_mibps", "MiB/s"), ("Write", "write_mibps", "MiB/s")),
    "latency": (("Read", "read_ms", "ms/op"), ("Write", "write_ms", "ms/op")),
    "size": (("Read", "read_kib", "KiB"), ("Write", "write_kib", "KiB")),
    "queue": (("Queue length", "queue_length", "ops"), ("Idle", "idle_pct", "%")),
    "burst": (("Burst balance", "burst_balance", "%"),),
}


def step_for(span: timedelta) -> int:
    wanted = span.total_seconds() / MAX_POINTS
    return next((s for s in STEPS if s >= wanted), STEPS[-1])


def bucketed(samples: Sequence[VolumeSample], step: int) -> list[VolumeSample]:
    """Samples of ``step`` seconds from minute samples (the period: the minutes with data)."""
    if step == 60:
        return list(samples)
    groups: dict[int, list[VolumeSample]] = {}
    for s in samples:
        groups.setdefault(int(s.timestamp.timestamp()) // step * step, []).append(s)
    out = []
    for start, group in sorted(groups.items()):
        values = {}
        for name in VOLUME_FIELDS:
            known = [v for s in group if (v := getattr(s, name)) is not None]
            if not known:
                values[name] = None
            elif name in SUMMED:
                values[name] = sum(known)
            elif name in LOWEST:
                values[name] = min(known)
            elif name in HIGHEST:
                values[name] = max(known)
            else:
                values[name] = sum(known) / len(known)
        when = datetime.fromtimestamp(start, group[0].timestamp.tzinfo)
        out.append(VolumeSample(when, 60 * len(group), **values))
    return out


def charts(
    samples: Sequence[VolumeSample],
    start: datetime,
    end: datetime,
    forecast: CreditForecast | None = None,
) -> tuple[int, dict[str, dict]]:
    """(step seconds, {key: {"x": [...], "series": [...]}}) for the volume page."""
    step = step_for(end - start)
    rows = bucketed(samples, step)
    first = int(start.timestamp()) // step * step
    xs = list(range(first, int(end.timestamp()), step))
    slot = {int(s.timestamp.timestamp()): i for i, s in enumerate(rows)}
    columns = figure_columns(rows)

    def spread(values: list[float | None]) -> list[float | None]:
        out = []
        for x in xs:
            i = slot.get(x)
            v = None if i is None else values[i]
            out.append(None if v is None else math.floor(v * 10_000 + 0.5) / 10_000)
        return out

    out = {
        key: {
            "x": xs,
            "series": [
                {"label": label, "unit": unit, "values": spread(columns[attr]), "dash": False}
                for label, attr, unit in parts
            ],
        }
        for key, parts in CHARTS.items()
    }
    line = forecast.line() if forecast is not None else []
    if line and xs:
        out["burst"] = _with_forecast(out["burst"], line, step)
    return step, out


def _with_forecast(chart: dict, line: list[tuple[datetime, float]], step: int) -> dict:
    """The x axis reaching to the forecast exhaustion, with the dashed forecast line."""
    (t0, v0), (t1, _) = line
    a, b = t0.timestamp(), t1.timestamp()
    xs = list(chart["x"])
    x = xs[-1] + step
    while x < b:
        xs.append(x)
        x += step
    xs.append(int(b))
    values = [None if x < a else round(max(0.0, v0 * (1 - (x - a) / (b - a or 1))), 2) for x in xs]
    values[-1] = 0.0
    start = max((i for i, x in enumerate(xs) if x <= a), default=None)
    if start is not None:
        values[start] = round(v0, 2)
    padded = [
        {**s, "values": s["values"] + [None] * (len(xs) - len(s["values"]))}
        for s in chart["series"]
    ]
    padded.append({"label": "Forecast", "unit": "%", "values": values, "dash": True})
    return {"x": xs, "series": padded}

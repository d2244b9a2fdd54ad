"""Chart and API series from samples (pure: no Django, no I/O).

The x axis has one point per period of the range, so a period with no row is a ``None``
value: a gap, drawn as a gap (``static/js/timeseries.js``), never a zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta

from .metrics import GIB, Columns, Sample, columns_of, figures_of
from .verdict import CreditForecast

#: (key in the API, chart label, MinuteFigures attribute, unit)
SERIES: tuple[tuple[str, str, str, str], ...] = (
    ("read_ops", "Read", "read_ops", "ops/s"),
    ("write_ops", "Write", "write_ops", "ops/s"),
    ("metadata_ops", "Metadata", "metadata_ops", "ops/s"),
    ("read_mibps", "Read", "read_mibps", "MiB/s"),
    ("write_mibps", "Write", "write_mibps", "MiB/s"),
    ("metadata_mibps", "Metadata", "metadata_mibps", "MiB/s"),
    ("metered_mibps", "Metered", "metered_mibps", "MiB/s"),
    ("permitted_mibps", "Permitted", "permitted_mibps", "MiB/s"),
    ("io_limit_pct", "PercentIOLimit", "io_limit_pct", "%"),
    ("throughput_utilisation_pct", "Of permitted", "throughput_utilisation_pct", "%"),
    ("burst_credit_balance", "Burst credits", "burst_credit_balance", "bytes"),
    ("client_connections", "Clients", "client_connections", "count"),
    ("average_read_kib", "Read size", "average_read_kib", "KiB"),
    ("average_write_kib", "Write size", "average_write_kib", "KiB"),
    ("average_metadata_kib", "Metadata size", "average_metadata_kib", "KiB"),
)


def grid(
    samples: Sequence[Sample], start: datetime, end: datetime, step: timedelta
) -> tuple[list[int], dict[str, list[float | None]]]:
    """Unix-second x values every ``step`` of [start, end), and every MinuteFigures column
    (``metrics.figure_columns``) over them: None where no sample falls on an x."""
    return grid_of(columns_of(samples), start, end, step)


def grid_of(
    series: Columns, start: datetime, end: datetime, step: timedelta
) -> tuple[list[int], dict[str, list[float | None]]]:
    """``grid`` of samples read as ``Columns`` (``history.load_columns``)."""
    seconds = int(step.total_seconds())
    first = int(start.timestamp()) // seconds * seconds
    xs = list(range(first, int(end.timestamp()), seconds))
    stop = first + len(xs) * seconds
    slot = {  # index in xs -> the (last) sample on it
        (ts - first) // seconds: i
        for i, ts in enumerate(series["ts"])
        if first <= ts < stop and (ts - first) % seconds == 0
    }
    if len(slot) == len(series["ts"]) == len(xs):  # a value at every x, in order: the usual case
        return xs, figures_of(series)
    kept = list(slot.values())
    columns = figures_of({name: [values[i] for i in kept] for name, values in series.items()})
    spread = {}
    for name, values in columns.items():
        spread[name] = column = [None] * len(xs)
        for x, value in zip(slot, values, strict=True):
            column[x] = value
    return xs, spread


def _rounded(values: list[float | None], scale: float = 1.0) -> list[float | None]:
    """Four decimals (what the JSON carries); ``round(v, 4)`` took most of a chart's time."""
    if scale == 1.0:
        return [None if v is None else math.floor(v * 10_000 + 0.5) / 10_000 for v in values]
    return [None if v is None else math.floor(v / scale * 10_000 + 0.5) / 10_000 for v in values]


def series(samples: Sequence[Sample], start: datetime, end: datetime, step: timedelta) -> dict:
    """Every derived series over the range, for the API: {"x": [...], "<key>": [...]}."""
    xs, columns = grid(samples, start, end, step)
    out: dict = {"x": xs}
    for key, _label, attr, _unit in SERIES:
        out[key] = _rounded(columns[attr])
    return out


def _by_kind(attr: str, unit: str) -> tuple[tuple[str, str, str, bool], ...]:
    """Read, write and metadata series of ``attr`` (``"{}_ops"``: ``read_ops``, ...)."""
    kinds = (("Read", "read"), ("Write", "write"), ("Metadata", "metadata"))
    return tuple((label, attr.format(kind), unit, False) for label, kind in kinds)


#: The file system page's charts: key -> series (label, MinuteFigures attribute, unit, dashed).
CHARTS: dict[str, tuple[tuple[str, str, str, bool], ...]] = {
    "ops": _by_kind("{}_ops", "ops/s"),
    "mibps": (
        *_by_kind("{}_mibps", "MiB/s"),
        ("Metered", "metered_mibps", "MiB/s", False),
        ("Permitted", "permitted_mibps", "MiB/s", True),
    ),
    "opsize": _by_kind("average_{}_kib", "KiB"),
    "iolimit": (("PercentIOLimit", "io_limit_pct", "%", False),),
    "clients": (("Clients", "client_connections", "connections", False),),
    "credits": (("Burst credits", "burst_credit_balance", "GiB", False),),
}
#: Values of these charts are divided by the scale (credits are drawn in GiB).
SCALES = {"credits": GIB}


def charts(
    samples: Sequence[Sample],
    start: datetime,
    end: datetime,
    step: timedelta,
    forecast: CreditForecast | None = None,
) -> dict[str, dict]:
    """The file system page's charts: ops/s, MiB/s, average request sizes, PercentIOLimit,
    client connections, credits (+ forecast)."""
    return with_forecast(charts_of(columns_of(samples), start, end, step), forecast, step)


def charts_of(series: Columns, start: datetime, end: datetime, step: timedelta) -> dict[str, dict]:
    """``charts`` (without the forecast) of samples read as ``Columns``."""
    xs, columns = grid_of(series, start, end, step)
    return {
        key: {
            "x": xs,
            "series": [
                {
                    "label": label,
                    "unit": unit,
                    "values": _rounded(columns[attr], SCALES.get(key, 1.0)),
                    "dash": dash,
                }
                for label, attr, unit, dash in parts
            ],
        }
        for key, parts in CHARTS.items()
    }


def with_forecast(
    drawn: dict[str, dict], forecast: CreditForecast | None, step: timedelta
) -> dict[str, dict]:
    """``charts``' charts with the credit forecast's dashed line, if it has one (the charts of
    the measured minutes are shared among requests; the forecast is the request's own)."""
    line = forecast.line() if forecast is not None else []
    if not line:
        return drawn
    return {**drawn, "credits": _with_forecast(drawn["credits"], line, step)}


def _with_forecast(chart: dict, line: list[tuple[datetime, float]], step: timedelta) -> dict:
    """Extend the x axis to the forecast exhaustion and add the dashed forecast line, drawn
    point by point (the chart script does not join across gaps)."""
    (t0, v0), (t1, _v1) = line
    a, b = t0.timestamp(), t1.timestamp()
    xs = list(chart["x"])
    seconds = max(60, int(step.total_seconds()), int((b - a) / 240) // 60 * 60)
    x = (xs[-1] if xs else int(a)) + seconds
    while x < b:
        xs.append(x)
        x += seconds
    xs.append(int(b))
    values = []
    for x in xs:
        values.append(None if x < a else round(max(0.0, v0 * (1 - (x - a) / (b - a))) / GIB, 4))
    values[-1] = 0.0  # the last x is the exhaustion time
    # Start the line at the last real x at or before t0 so it joins the measured curve.
    start = max((i for i, x in enumerate(xs) if x <= a), default=None)
    if start is not None:
        values[start] = round(v0 / GIB, 4)
    padded = [
        {**s, "values": s["values"] + [None] * (len(xs) - len(s["values"]))}
        for s in chart["series"]
    ]
    padded.append({"label": "Forecast", "unit": "GiB", "values": values, "dash": True})
    return {"x": xs, "series": padded}

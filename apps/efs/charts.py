"""Chart and API series from samples (pure: no Django, no I/O).

The x axis has one point per period of the range, so a period with no row is a ``None``
value: a gap, drawn as a gap (``static/js/timeseries.js``), never a zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from .metrics import GIB, MinuteFigures, Sample, minute_figures
from .verdict import CreditForecast

#: The kinds of I/O the charts draw apart, as the attributes of ``MinuteFigures`` name them.
IO_KINDS = ("read", "write", "metadata")

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
) -> tuple[list[int], list[MinuteFigures | None]]:
    """Unix-second x values every ``step`` of [start, end) and the figures at each, or None."""
    by_time = {int(s.timestamp.timestamp()): s for s in samples}
    seconds = int(step.total_seconds())
    first = int(start.timestamp()) // seconds * seconds
    xs = list(range(first, int(end.timestamp()), seconds))
    return xs, [minute_figures(by_time[x]) if x in by_time else None for x in xs]


def series(samples: Sequence[Sample], start: datetime, end: datetime, step: timedelta) -> dict:
    """Every derived series over the range, for the API: {"x": [...], "<key>": [...]}."""
    xs, figures = grid(samples, start, end, step)
    out: dict = {"x": xs}
    for key, _label, attr, _unit in SERIES:
        out[key] = [None if f is None else _round(getattr(f, attr)) for f in figures]
    return out


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _pick(figures, attr: str, scale: float = 1.0) -> list[float | None]:
    return [
        None if f is None or getattr(f, attr) is None else round(getattr(f, attr) / scale, 4)
        for f in figures
    ]


def charts(
    samples: Sequence[Sample],
    start: datetime,
    end: datetime,
    step: timedelta,
    forecast: CreditForecast | None = None,
) -> dict[str, dict]:
    """The file system page's charts: ops/s, MiB/s, average request sizes, PercentIOLimit,
    client connections, credits (+ forecast)."""
    xs, figures = grid(samples, start, end, step)

    def chart(parts: list[tuple[str, str, str, bool]], scale: float = 1.0) -> dict:
        return {
            "x": xs,
            "series": [
                {"label": label, "unit": unit, "values": _pick(figures, attr, scale), "dash": dash}
                for label, attr, unit, dash in parts
            ],
        }

    def by_kind(attr: str, unit: str) -> list[tuple[str, str, str, bool]]:
        """Read, write and metadata: ``attr`` with ``{}`` for the kind."""
        return [(kind.title(), attr.format(kind), unit, False) for kind in IO_KINDS]

    out = {
        "ops": chart(by_kind("{}_ops", "ops/s")),
        "mibps": chart(
            [
                *by_kind("{}_mibps", "MiB/s"),
                ("Metered", "metered_mibps", "MiB/s", False),
                ("Permitted", "permitted_mibps", "MiB/s", True),
            ]
        ),
        "opsize": chart(by_kind("average_{}_kib", "KiB")),
        "iolimit": chart([("PercentIOLimit", "io_limit_pct", "%", False)]),
        "clients": chart([("Clients", "client_connections", "connections", False)]),
    }
    credits = chart([("Burst credits", "burst_credit_balance", "GiB", False)], GIB)
    line = forecast.line() if forecast is not None else []
    if line:
        credits = _with_forecast(credits, line, step)
    out["credits"] = credits
    return out


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

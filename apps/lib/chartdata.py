"""Charts' text alternative: the latest value of each series, and the data as CSV.

Pure: a chart is the dict ``static/js/timeseries.js`` draws (``{"x": [unix s], "series":
[{"label", "unit", "values"}]}``).
"""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from typing import Any


def latest(chart: dict[str, Any]) -> dict[str, Any]:
    """``{"at": datetime | None, "values": [(label, value, unit, at)]}``: each series' last
    value that is not a gap (None when it has none). When every series that has a value has it
    at the same x, that time is the chart's ``at`` and each series' is None; otherwise (a
    forecast reaching hours past the last measurement) each value carries its own time, so a
    measured value is never shown at a time it was not measured."""
    xs = chart.get("x") or []
    found: list[tuple[str, float | None, str, int | None]] = []
    for series in chart.get("series", []):
        values = series.get("values", [])
        last = next((i for i in range(len(values) - 1, -1, -1) if values[i] is not None), None)
        value = None if last is None else values[last]
        x = xs[last] if last is not None and last < len(xs) else None
        found.append((series.get("label", ""), value, series.get("unit", ""), x))
    times = {x for *_, x in found if x is not None}

    def moment(x: int | None) -> datetime | None:
        return None if x is None else datetime.fromtimestamp(x, UTC)

    if len(times) <= 1:
        at = moment(times.pop()) if times else None
        return {"at": at, "values": [(label, v, unit, None) for label, v, unit, _ in found]}
    return {"at": None, "values": [(label, v, unit, moment(x)) for label, v, unit, x in found]}


def to_csv(chart: dict[str, Any]) -> str:
    """One row per point: ``time_utc`` then one column per series (empty for a gap)."""
    out = io.StringIO()
    writer = csv.writer(out)
    series = chart.get("series", [])
    writer.writerow(
        ["time_utc"] + [f"{s.get('label', '')} ({s.get('unit', '')})".strip() for s in series]
    )
    for i, x in enumerate(chart.get("x") or []):
        row = [datetime.fromtimestamp(x, UTC).isoformat()]
        for s in series:
            vals = s.get("values", [])
            v = vals[i] if i < len(vals) else None
            row.append("" if v is None else v)
        writer.writerow(row)
    return out.getvalue()


def csv_response(request: Any, charts: dict[str, dict[str, Any]], name: str) -> Any:
    """``?chart=<key>&format=csv`` of a page's charts as a CSV download, or None when the
    request does not ask for one (an unknown chart is not a download either)."""
    from django.http import HttpResponse

    key = request.GET.get("chart", "")
    if request.GET.get("format") != "csv" or key not in charts:
        return None
    response = HttpResponse(to_csv(charts[key]), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="vigil-{name}-{key}.csv"'
    return response

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
    """``{"at": datetime | None, "values": [(label, value, unit)]}``: each series' last value
    that is not a gap (None when it has none)."""
    xs = chart.get("x") or []
    values = []
    last_x = None
    for series in chart.get("series", []):
        found = None
        for i in range(len(series.get("values", [])) - 1, -1, -1):
            if series["values"][i] is not None:
                found = series["values"][i]
                if i < len(xs):
                    last_x = max(last_x or xs[i], xs[i])
                break
        values.append((series.get("label", ""), found, series.get("unit", "")))
    at = datetime.fromtimestamp(last_x, UTC) if last_x is not None else None
    return {"at": at, "values": values}


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

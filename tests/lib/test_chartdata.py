from __future__ import annotations

from datetime import UTC, datetime

from apps.lib.chartdata import latest, to_csv

CHART = {
    "x": [1764000000, 1764000060, 1764000120],
    "series": [
        {"label": "Read", "unit": "MiB/s", "values": [1.5, 2.25, None]},
        {"label": "Write", "unit": "MiB/s", "values": [None, None, None]},
    ],
}


def test_it_takes_each_series_last_value_that_is_not_a_gap():
    found = latest(CHART)
    assert found["values"] == [("Read", 2.25, "MiB/s", None), ("Write", None, "MiB/s", None)]
    assert found["at"] == datetime.fromtimestamp(1764000060, UTC)
    assert latest({}) == {"at": None, "values": []}


def test_a_forecast_past_the_last_measurement_keeps_each_value_at_its_own_time():
    chart = {
        "x": [1764000000, 1764000060, 1764000120],
        "series": [
            {"label": "Burst credits", "unit": "GiB", "values": [173.0, None, None]},
            {"label": "Forecast", "unit": "GiB", "values": [173.0, 80.0, 0.0]},
        ],
    }
    found = latest(chart)
    assert found["at"] is None
    assert found["values"] == [
        ("Burst credits", 173.0, "GiB", datetime.fromtimestamp(1764000000, UTC)),
        ("Forecast", 0.0, "GiB", datetime.fromtimestamp(1764000120, UTC)),
    ]


def test_it_writes_gaps_as_empty_cells_never_zero():
    lines = to_csv(CHART).splitlines()
    assert lines[0] == "time_utc,Read (MiB/s),Write (MiB/s)"
    assert lines[3] == "2025-11-24T16:02:00+00:00,,"


def test_a_page_answers_csv_only_for_a_chart_it_has():
    from django.test import RequestFactory

    from apps.lib.chartdata import csv_response

    factory = RequestFactory()
    found = csv_response(factory.get("/?chart=read&format=csv"), {"read": CHART}, "fs-1")
    assert found["Content-Disposition"] == 'attachment; filename="vigil-fs-1-read.csv"'
    assert csv_response(factory.get("/?chart=nope&format=csv"), {"read": CHART}, "x") is None
    assert csv_response(factory.get("/?chart=read"), {"read": CHART}, "x") is None

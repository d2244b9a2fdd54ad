"""The exporters' building blocks (pure): only real numbers become samples."""

from __future__ import annotations

import pytest

from apps.prometheus.families import Gauges, SubjectStatuses, number


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0, 0.0), (2.5, 2.5), (True, 1.0), (False, 0.0), (None, None), ("12", None)]
    + [(float("nan"), None), (float("inf"), None)],
)
def test_it_reads_only_finite_numbers(value, expected):
    assert number(value) == expected


def test_it_adds_no_sample_for_a_missing_figure_and_scales_the_others():
    gauges = Gauges(["region"])
    gauges.declare("vigil_x_bytes", "X.")
    gauges.add("vigil_x_bytes", ["eu-west-1"], None)
    gauges.add("vigil_x_bytes", ["us-east-1"], 2, scale=1024)
    (family,) = list(gauges)
    assert [(s.labels, s.value) for s in family.samples] == [({"region": "us-east-1"}, 2048.0)]


def test_it_gives_one_sample_per_status_with_only_the_current_one_set():
    statuses = SubjectStatuses()
    statuses.add("efs", "eu-west-1", "prod", "fs-1", "critical")
    assert {s.labels["status"]: s.value for s in statuses.family.samples} == {
        "ok": 0.0,
        "warning": 0.0,
        "critical": 1.0,
        "unknown": 0.0,
    }

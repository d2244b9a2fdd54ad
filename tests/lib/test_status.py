from __future__ import annotations

from apps.lib.status import Status, worst


def test_it_ranks_critical_over_missing_data_over_warning():
    assert worst(["ok", "warning", "unknown"]) is Status.UNKNOWN
    assert worst([Status.UNKNOWN, Status.CRITICAL]) is Status.CRITICAL
    assert worst(["ok", "warning"]) is Status.WARNING


def test_it_has_no_worst_status_for_nothing():
    assert worst([]) is None

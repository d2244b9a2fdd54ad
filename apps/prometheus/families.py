"""Building blocks for the concerns' Prometheus exporters (no Django, no I/O).

``Gauges`` holds gauge families that share one set of label names and adds a sample only for
a real number: a figure that is missing (None) or not a number adds nothing, never a 0.
``SubjectStatuses`` is the one ``vigil_subject_status`` family every concern adds its
subjects to, one-hot over the four statuses. ``subject_rows`` reads the subjects it is given
(a queryset: the only I/O here, and no Django import).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

from prometheus_client.core import GaugeMetricFamily, Metric

from apps.lib.status import Status


def number(value: object) -> float | None:
    """``value`` as a float when it is a finite number (a bool is 0 or 1), else None."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


class Gauges:
    """Gauge families with the same label names, yielded in the order they were declared."""

    def __init__(self, label_names: Sequence[str]) -> None:
        self.label_names = list(label_names)
        self._families: dict[str, GaugeMetricFamily] = {}

    def declare(self, name: str, documentation: str, unit: str = "") -> None:
        self._families[name] = GaugeMetricFamily(
            name, documentation, labels=self.label_names, unit=unit
        )

    def add(self, name: str, labels: Sequence[str], value: object, scale: float = 1.0) -> None:
        """Add a sample to ``name`` unless ``value`` is missing; ``scale`` converts units."""
        if (figure := number(value)) is not None:
            self._families[name].add_metric(labels, figure * scale)

    def __iter__(self) -> Iterator[Metric]:
        return iter(self._families.values())


class SubjectStatuses:
    """``vigil_subject_status{concern,region,account,subject,status}``: 1 for the current
    status of each subject, 0 for the three others."""

    LABELS = ("concern", "region", "account", "subject", "status")

    def __init__(self) -> None:
        self.family = GaugeMetricFamily(
            "vigil_subject_status",
            "Current status of each monitored subject: 1 for its status, 0 for the others.",
            labels=self.LABELS,
        )

    def add(self, concern: str, region: str, account: str, subject: str, status: str) -> None:
        for each in Status:
            self.family.add_metric(
                [concern, region, account, subject, each.value], float(each.value == status)
            )


def subject_rows(subjects: Any, *fields: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(region code, account name or "" for a site, row)`` of each of ``subjects`` (a
    queryset), the row holding ``fields``; read unordered, in chunks."""
    rows = subjects.values("region__code", "region__account__name", *fields).order_by()
    for row in rows.iterator(chunk_size=2000):
        yield row["region__code"], row["region__account__name"] or "", row

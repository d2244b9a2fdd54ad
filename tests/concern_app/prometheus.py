"""Gadgets for ``/metrics``: their statuses only."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import QuerySet
from prometheus_client.core import Metric

from apps.prometheus.families import SubjectStatuses


def metrics(subjects: QuerySet, statuses: SubjectStatuses) -> Iterator[Metric]:
    for gadget in subjects.select_related("region", "region__account"):
        region = gadget.region
        account = region.account.name if region.account else ""
        statuses.add("gadgets", region.code, account, gadget.name, gadget.status)
    yield from ()

"""The fleet as Prometheus sees it: one collector over every registered concern.

The registry is Vigil's own (never prometheus-client's global one, which would add this
process's own counters and pretend they were fleet state). Each scrape reads the current
figures from the database: one or two queries per concern, whatever the fleet's size.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import Metric
from prometheus_client.exposition import choose_encoder

from apps.regions import concerns

from .families import SubjectStatuses


class FleetCollector:
    def collect(self) -> Iterator[Metric]:
        statuses = SubjectStatuses()
        for concern in concerns.registered():
            if concern.prometheus is not None:
                yield from concern.prometheus(concern.subjects(), statuses)
        yield statuses.family


registry = CollectorRegistry(auto_describe=False)
registry.register(FleetCollector())


def render(accept: str = "") -> tuple[bytes, str]:
    """The exposition (text format, or OpenMetrics when ``accept`` asks for it) and its type."""
    encode, content_type = choose_encoder(accept)
    return encode(registry), content_type

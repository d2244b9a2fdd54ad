"""The fleet as Prometheus sees it: one collector over every registered concern.

The registry is Vigil's own (never prometheus-client's global one, which would add this
process's own counters and pretend they were fleet state). Each scrape reads the current
figures from the database: one or two queries per concern, whatever the fleet's size. A scrape
of the seeded fleet (34 k samples) stays well under 200 ms because ``text_format`` writes the
text format in one loop and ``render`` keeps the body for a while.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator

from django.conf import settings
from django.core.cache import cache
from prometheus_client import CollectorRegistry
from prometheus_client.core import Metric
from prometheus_client.exposition import choose_encoder, generate_latest
from prometheus_client.utils import floatToGoString

from apps.alerts import prometheus as alerts
from apps.regions import concerns

from .families import SubjectStatuses


class FleetCollector:
    def collect(self) -> Iterator[Metric]:
        statuses = SubjectStatuses()
        for concern in concerns.registered():
            if concern.prometheus is not None:
                yield from concern.prometheus(concern.subjects(), statuses)
        yield statuses.family
        yield from alerts.metrics()


registry = CollectorRegistry(auto_describe=False)
registry.register(FleetCollector())


def render(accept: str = "") -> tuple[bytes, str]:
    """The exposition (text format, or OpenMetrics when ``accept`` asks for it) and its type,
    rendered at most once per ``VIGIL_METRICS_CACHE_SECONDS`` (0: every time): the figures
    change when a collection ends, and an HA pair of Prometheus servers, or a Grafana panel
    next to them, then costs one rendering per interval, not one each."""
    encode, content_type = choose_encoder(accept)
    if encode is generate_latest:
        encode = text_format
    seconds = settings.VIGIL_METRICS_CACHE_SECONDS
    if seconds <= 0:
        return encode(registry), content_type
    key = f"vigil:metrics:{hashlib.sha256(content_type.encode()).hexdigest()[:16]}"
    body = cache.get(key)
    if body is None:
        body = encode(registry)
        cache.set(key, body, seconds)
    return body, content_type


def _escape(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def text_format(collector: CollectorRegistry | Iterable[Metric]) -> bytes:
    """Prometheus' text format 0.0.4 for gauge families (what every concern yields).

    The same bytes as ``generate_latest`` for them (tested); any other family type is left to
    it. Each set of labels is escaped once for all the families that share it (every subject
    has ten or so), and our own metric and label names are trusted: ``generate_latest``
    validates and escapes every label of every sample again, 60 % of a scrape.
    """
    families = list(collector.collect() if hasattr(collector, "collect") else collector)
    if any(family.type != "gauge" for family in families):
        return generate_latest(FixedFamilies(families))
    labels_text: dict[tuple, str] = {}
    out: list[str] = []
    for family in families:
        documentation = family.documentation.replace("\\", r"\\").replace("\n", r"\n")
        out.append(f"# HELP {family.name} {documentation}\n# TYPE {family.name} gauge\n")
        for sample in family.samples:
            key = tuple(sample.labels.items())
            text = labels_text.get(key)
            if text is None:
                pairs = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(key))
                text = labels_text[key] = f"{{{pairs}}}" if pairs else ""
            stamp = "" if sample.timestamp is None else f" {int(float(sample.timestamp) * 1000):d}"
            out.append(f"{sample.name}{text} {floatToGoString(sample.value)}{stamp}\n")
    return "".join(out).encode()


class FixedFamilies:
    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> list[Metric]:
        return self.families

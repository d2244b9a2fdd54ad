"""Keep-alive probe targets for ``/metrics``: each target's latest result, in two queries.

``vigil_probe_up`` is 1 when the latest probe got an answer (no error, no 5xx), 0 when not;
a target never probed has no samples. The idle timeout is absent when the probe failed or
the server kept the connection past the cap (then it is at least the cap): never 0.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import OuterRef, QuerySet, Subquery
from prometheus_client.core import Metric

from apps.prometheus.families import Gauges, SubjectStatuses

from .models import Result

LABELS = ("region", "account", "target", "url")

# (metric, Result field, help)
FIGURES = (
    (
        "vigil_probe_keepalive_idle_timeout_seconds",
        "idle_timeout_s",
        "How long the server kept an idle keep-alive connection open (latest probe).",
    ),
    (
        "vigil_probe_keepalive_advertised_timeout_seconds",
        "advertised_timeout_s",
        "The timeout the server announced in its Keep-Alive header.",
    ),
    ("vigil_probe_keepalive_cap_seconds", "cap_s", "How long the latest probe waited at most."),
    ("vigil_probe_first_byte_seconds", "first_byte_s", "Time to the response's first byte."),
)


def metrics(subjects: QuerySet, statuses: SubjectStatuses) -> Iterator[Metric]:
    gauges = Gauges(LABELS)
    gauges.declare("vigil_probe_up", "1 when the latest probe got an answer (no error, no 5xx).")
    for name, _, documentation in FIGURES:
        gauges.declare(name, documentation)
    gauges.declare("vigil_probe_last_run_timestamp_seconds", "When the latest probe started.")
    gauges.declare(
        "vigil_probe_tls_expiry_timestamp_seconds", "When the target's TLS certificate expires."
    )
    latest = Result.objects.filter(target=OuterRef("pk")).order_by("-created", "-pk")
    targets = list(
        subjects.annotate(latest_id=Subquery(latest.values("pk")[:1]))
        .values("region__code", "region__account__name", "name", "url", "status", "latest_id")
        .order_by()
    )
    fields = [field for _, field, _ in FIGURES]
    ids = [t["latest_id"] for t in targets if t["latest_id"] is not None]
    results = {
        r["pk"]: r
        for r in Result.objects.filter(pk__in=ids).values(
            "pk", "error", "status_code", "started_at", "tls_expires", *fields
        )
    }
    for target in targets:
        region, account = target["region__code"], target["region__account__name"] or ""
        shown = target["name"] or target["url"]
        labels = (region, account, shown, target["url"])
        statuses.add("probes", region, account, shown, target["status"])
        result = results.get(target["latest_id"])
        if result is None:
            continue
        code = result["status_code"]
        gauges.add(
            "vigil_probe_up", labels, not result["error"] and code is not None and code < 500
        )
        for metric, field, _ in FIGURES:
            gauges.add(metric, labels, result[field])
        gauges.add(
            "vigil_probe_last_run_timestamp_seconds", labels, result["started_at"].timestamp()
        )
        if result["tls_expires"] is not None:
            gauges.add(
                "vigil_probe_tls_expiry_timestamp_seconds",
                labels,
                result["tls_expires"].timestamp(),
            )
    yield from gauges

"""The on-call state for ``/metrics``: open incidents by cause, escalations waiting for their
next level, maintenance windows open now, subjects held by a failing declared upstream. Four
queries, whatever the number of incidents.

Labels stay few (``concern``, ``region``): a cause's key or a subject would make one series per
incident. A group with nothing open has no sample (``sum(...) or vector(0)`` in a query).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import datetime

from django.db.models import Count, Exists, OuterRef, Q
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric

from .models import Cause, Incident, MaintenanceWindow, Notification
from .routing import dependency_key

LABELS = ("concern", "region")


def metrics(now: datetime | None = None) -> Iterator[Metric]:
    now = now or timezone.now()
    causes = GaugeMetricFamily(
        "vigil_alert_causes_open",
        "Open incidents by cause (one storage server, account-region, agent...), by concern and "
        "region.",
        labels=LABELS,
    )
    subjects = GaugeMetricFamily(
        "vigil_alert_cause_subjects_open",
        "Subjects failing in an open incident by cause (inhibited: paged once, with the cause).",
        labels=LABELS,
    )
    for row in (
        Cause.objects.filter(closed=None)
        .values("concern", "region__code")
        .annotate(
            n=Count("pk", distinct=True),
            members=Count("incidents", filter=Q(incidents__closed=None), distinct=True),
        )
        .order_by("concern", "region__code")
    ):
        labels = [row["concern"], row["region__code"]]
        causes.add_metric(labels, float(row["n"]))
        subjects.add_metric(labels, float(row["members"]))
    pending = GaugeMetricFamily(
        "vigil_alert_escalations_pending",
        "Open, unacknowledged incidents whose escalation policy has a level still to come (of "
        "an incident by cause, the one that climbs for all).",
        labels=LABELS,
    )
    inhibited = Notification.objects.filter(
        transition=OuterRef("last_transition"), state=Notification.State.INHIBITED
    )
    for row in (
        Incident.objects.filter(closed=None, acknowledged=None, next_escalation__isnull=False)
        .exclude(Exists(inhibited))  # held on its cause's incident, which climbs for it
        .values("concern", "region__code")
        .annotate(n=Count("pk"))
        .order_by("concern", "region__code")
    ):
        pending.add_metric([row["concern"], row["region__code"]], float(row["n"]))
    windows = GaugeMetricFamily(
        "vigil_alert_maintenance_windows_open",
        "Enabled recurring maintenance windows open now (holding back what they match).",
    )
    enabled = MaintenanceWindow.objects.filter(enabled=True).only(
        "days", "start", "cron", "minutes", "time_zone"
    )
    windows.add_metric([], float(sum(w.schedule.open_at(now) is not None for w in enabled)))
    yield from (causes, subjects, pending, windows, held_by_dependencies())


def held_by_dependencies() -> Metric:
    """Subjects failing while what they are declared to depend on (directly or through
    others) fails: held on the upstream's incident rather than paging."""
    held = GaugeMetricFamily(
        "vigil_alert_dependencies_holding",
        "Subjects held back because a subject they are declared to depend on (directly or "
        "through others) is failing, by concern and region.",
        labels=LABELS,
    )
    counts: Counter[tuple[str, str]] = Counter()
    for type_id, object_id, key, concern, region in Incident.objects.filter(
        closed=None, cause__closed=None, cause__key__startswith="dependency/"
    ).values_list("content_type_id", "object_id", "cause__key", "concern", "region__code"):
        if key != dependency_key(type_id, object_id):  # not the upstream itself
            counts[concern, region] += 1
    for labels, n in sorted(counts.items()):
        held.add_metric(list(labels), float(n))
    return held

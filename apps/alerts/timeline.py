"""An incident's timeline: its status changes (transitions), escalations, acknowledgements and
notes, oldest first, for its page and ``GET /api/alerts/incidents/<id>/timeline/``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .models import Incident, IncidentEvent, Transition


@dataclass(frozen=True)
class Step:
    at: datetime
    kind: str  # "change", "escalated", "acknowledged", "note"
    text: str
    by: str  # who, for acknowledgements and notes ("" for Vigil)
    status: str = ""  # a change's new status


def timeline(incident: Incident) -> list[Step]:
    changes = Transition.objects.filter(
        content_type_id=incident.content_type_id,
        object_id=incident.object_id,
        created__gte=incident.opened,
    )
    if incident.closed is not None:
        changes = changes.filter(created__lte=incident.closed)
    steps = [
        Step(t.created, "change", f"{t.old_status} → {t.new_status}: {t.reason}", "", t.new_status)
        for t in changes.order_by("created", "pk")[:500]
    ]
    events = IncidentEvent.objects.filter(incident=incident).select_related("user")
    steps += [
        Step(e.created, e.kind, e.text or e.get_kind_display(), str(e.user) if e.user else "")
        for e in events[:500]
    ]
    order = {"change": 0, "escalated": 1, "acknowledged": 2, "note": 3}
    return sorted(steps, key=lambda s: (s.at, order.get(s.kind, 9)))

"""Incident notes: operators add them (page and API), viewers may not; notes, escalations,
acknowledgements and state changes form the incident's timeline; each note is in the audit
trail."""

from __future__ import annotations

import pytest
from auditlog.models import LogEntry

from apps import alerts
from apps.alerts.models import Incident, IncidentEvent
from apps.lib.status import Status, Verdict

pytestmark = pytest.mark.django_db


@pytest.fixture
def incident(gadget, oncall) -> Incident:
    alerts.record(gadget, Verdict(Status.CRITICAL, "array md3 degraded"))
    return Incident.objects.get()


def test_an_operator_adds_notes_in_the_page_and_the_api(client, operator, incident):
    client.force_login(operator)
    page = client.get(f"/alerts/incidents/{incident.pk}/").content.decode()
    assert "Add a note" in page
    client.post(f"/alerts/incidents/{incident.pk}/notes/", {"text": "Reseated the cable"})
    answer = client.post(
        f"/api/alerts/incidents/{incident.pk}/notes/", {"text": "Replacing sdd"},
        content_type="application/json",
    )  # fmt: skip
    assert answer.status_code == 201 and answer.json()["by"] == "operator"
    client.post(f"/alerts/incidents/{incident.pk}/acknowledge/", {"next": "incident"})
    steps = client.get(f"/api/alerts/incidents/{incident.pk}/timeline/").json()
    assert [(s["kind"], s["text"]) for s in steps][1:] == [
        ("note", "Reseated the cable"),
        ("note", "Replacing sdd"),
        ("acknowledged", "Acknowledged"),
    ]
    assert steps[0]["kind"] == "change" and steps[0]["status"] == "critical"
    page = client.get(f"/alerts/incidents/{incident.pk}/").content.decode()
    assert "Reseated the cable" in page and "Replacing sdd" in page
    notes = IncidentEvent.objects.filter(kind="note")
    logged = LogEntry.objects.get_for_objects(notes)
    assert logged.count() == 2 and {e.actor for e in logged} == {operator}


def test_a_viewer_may_not_add_notes_and_an_empty_note_is_refused(
    client, viewer, operator, incident
):
    client.force_login(viewer)
    assert "Add a note" not in client.get(f"/alerts/incidents/{incident.pk}/").content.decode()
    assert client.post(f"/alerts/incidents/{incident.pk}/notes/", {"text": "x"}).status_code == 403
    api = client.post(
        f"/api/alerts/incidents/{incident.pk}/notes/", {"text": "x"},
        content_type="application/json",
    )  # fmt: skip
    assert api.status_code == 403
    client.force_login(operator)
    empty = client.post(f"/alerts/incidents/{incident.pk}/notes/", {"text": "  "})
    assert empty.status_code == 400 and "Write the note." in empty.content.decode()
    too_long = client.post(
        f"/api/alerts/incidents/{incident.pk}/notes/", {"text": "x" * 5000},
        content_type="application/json",
    )  # fmt: skip
    assert too_long.status_code == 400
    assert not IncidentEvent.objects.exists()

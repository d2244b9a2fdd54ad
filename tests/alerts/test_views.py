from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps import alerts
from apps.alerts import routing
from apps.alerts.models import Channel, Incident, Rule, Silence
from apps.lib.status import Status, Verdict
from tests.helpers import bearer

pytestmark = pytest.mark.django_db

CRITICAL = Verdict(Status.CRITICAL, "disk failed")


def test_it_lists_open_incidents_by_region_and_acknowledges_one(logged_in_client, gadget, user):
    alerts.record(gadget, CRITICAL)
    page = logged_in_client.get("/alerts/").content.decode()
    assert "gadget g1" in page and "disk failed" in page and ">open<" in page
    incident = Incident.objects.get()
    logged_in_client.post(f"/alerts/incidents/{incident.pk}/acknowledge/")
    incident.refresh_from_db()
    assert incident.acknowledged_by == user
    assert ">acknowledged<" in logged_in_client.get("/alerts/").content.decode()


def test_it_shows_a_subjects_history_with_where_each_change_went(logged_in_client, gadget, oncall):
    flip = alerts.record(gadget, CRITICAL)
    page = logged_in_client.get(f"/alerts/history/{flip.content_type_id}/{gadget.pk}/").content
    assert b"disk failed" in page and b"On call: waiting to be sent" in page


def test_it_starts_and_ends_a_silence_from_the_page(logged_in_client, region, user):
    logged_in_client.post(
        "/alerts/silences/new/", {"region": region.pk, "hours": "2", "comment": "disk swap"}
    )
    silence = Silence.objects.get()
    assert silence.author == user and silence.comment == "disk swap"
    logged_in_client.post(f"/alerts/silences/{silence.pk}/expire/")
    silence.refresh_from_db()
    assert (
        not Silence.objects.filter(pk=silence.pk, ends__gt=silence.created)
        .exclude(ends=silence.ends)
        .exists()
    )


def test_it_shows_channel_health_and_edits_rules(logged_in_client, oncall):
    Channel.objects.filter(pk=oncall.pk).update(last_error="MessageRejected: nope")
    page = logged_in_client.get("/alerts/channels/").content.decode()
    assert "MessageRejected: nope" in page and "default" in page
    rule = Rule.objects.get(is_default=True)
    logged_in_client.post(
        f"/alerts/rules/{rule.pk}/",
        {"name": rule.name, "min_severity": "critical", "channels": [oncall.pk], "enabled": "on"},
    )
    rule.refresh_from_db()
    assert rule.min_severity == "critical" and rule.is_default


def test_the_api_lists_incidents_and_acknowledges_with_a_read_write_key(
    api_client, api_key, gadget
):
    alerts.record(gadget, CRITICAL)
    ro, rw = api_key(read_only=True), api_key(read_only=False)
    listing = api_client.get("/api/alerts/incidents/?open=true", **bearer(ro)).json()
    (incident,) = listing["results"]
    assert incident["status"] == "critical" and incident["region"] == "lab"
    url = f"/api/alerts/incidents/{incident['id']}/acknowledge/"
    assert api_client.post(url, **bearer(ro)).status_code == 403
    acked = api_client.post(url, **bearer(rw)).json()
    assert acked["acknowledged"] and acked["acknowledged_by"] == "oncall"


def test_the_api_creates_and_expires_silences(api_client, api_key, region):
    rw = api_key(read_only=False)
    created = api_client.post(
        "/api/alerts/silences/",
        {"region": region.pk, "hours": 1, "comment": "upgrade"},
        format="json",
        **bearer(rw),
    )
    assert created.status_code == 201, created.json()
    assert created.json()["author"] == "oncall"
    past = api_client.post(
        "/api/alerts/silences/", {"ends": "2001-01-01T00:00:00Z"}, format="json", **bearer(rw)
    )
    assert past.status_code == 400 and "ends" in past.json()["fields"]
    assert (
        api_client.delete(f"/api/alerts/silences/{created.json()['id']}/", **bearer(rw)).status_code
        == 204
    )


def test_the_api_lists_transitions_by_region(api_client, api_key, gadget):
    alerts.record(gadget, CRITICAL)
    body = api_client.get("/api/alerts/transitions/?region=lab", **bearer(api_key())).json()
    assert [t["new_status"] for t in body["results"]] == ["critical"]
    nowhere = api_client.get("/api/alerts/transitions/?region=nowhere", **bearer(api_key()))
    assert nowhere.status_code == 400  # no such region: not an empty list read as all quiet


def test_the_default_rule_cannot_be_deleted(api_client, api_key):
    rule = Rule.objects.get(is_default=True)
    response = api_client.delete(
        f"/api/alerts/rules/{rule.pk}/", **bearer(api_key(read_only=False))
    )
    assert response.status_code == 400
    assert Rule.objects.filter(pk=rule.pk).exists()


def test_it_plans_a_silence_for_one_subject_from_its_incident(logged_in_client, gadget, oncall):
    flip = alerts.record(gadget, CRITICAL)
    incidents = logged_in_client.get("/alerts/").content.decode()
    link = f"/alerts/silences/new/?content_type={flip.content_type_id}&amp;object_id={gadget.pk}"
    assert link in incidents
    form = logged_in_client.get(link.replace("&amp;", "&")).content.decode()
    assert "<h1>Silence Gadgets gadget g1 (Lab)</h1>" in form
    assert 'name="region"' not in form and 'name="concern"' not in form  # it goes without saying

    logged_in_client.post(
        link.replace("&amp;", "&"),
        {"starts": "2099-01-02T03:00", "hours": "4", "comment": "firmware upgrade"},
    )
    silence = Silence.objects.get()
    assert (silence.content_type_id, silence.object_id) == (flip.content_type_id, gadget.pk)
    assert silence.starts.year == 2099 and silence.ends - silence.starts == timedelta(hours=4)
    page = logged_in_client.get("/alerts/").content.decode()
    assert "planned" in page and "Gadgets gadget g1 (Lab)</a>" in page
    assert routing.active_silence(flip, timezone.now()) is None  # not yet


def test_it_edits_and_disables_a_channel(logged_in_client, oncall):
    assert (
        f'href="/alerts/channels/{oncall.pk}/"'
        in logged_in_client.get("/alerts/channels/").content.decode()
    )
    logged_in_client.post(
        f"/alerts/channels/{oncall.pk}/",
        {"name": "On call", "kind": "email", "target": "pager@example.com", "disabled": "on"},
    )
    oncall.refresh_from_db()
    assert oncall.target == "pager@example.com" and oncall.disabled


def test_it_routes_one_subject_from_its_history_page(logged_in_client, gadget, oncall):
    flip = alerts.record(gadget, CRITICAL)
    history = logged_in_client.get(f"/alerts/history/{flip.content_type_id}/{gadget.pk}/")
    link = f"/alerts/rules/new/?content_type={flip.content_type_id}&amp;object_id={gadget.pk}"
    assert link in history.content.decode()
    form = logged_in_client.get(link.replace("&amp;", "&")).content.decode()
    assert "routes <strong>Gadgets gadget g1 (Lab)</strong> only" in form
    logged_in_client.post(
        "/alerts/rules/new/",
        {
            "name": "g1 to on call",
            "subject": f"{flip.content_type_id}:{gadget.pk}",
            "min_severity": "warning",
            "channels": [oncall.pk],
            "enabled": "on",
        },
    )
    rule = Rule.objects.get(name="g1 to on call")
    assert (rule.content_type_id, rule.object_id) == (flip.content_type_id, gadget.pk)
    assert rule.matches(flip)

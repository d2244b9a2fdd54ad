"""Escalation policies: levels of channels with a delay each, attached to rules. Nobody
acknowledges: the next level is told once its delay has passed; acknowledged before: never.
Time is moved with time_machine; the beat's sweep (``tasks.sweep``) does the climbing."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.utils import timezone

from apps import alerts
from apps.alerts import tasks
from apps.alerts.models import Channel, EscalationPolicy, Incident, IncidentEvent, Rule
from apps.lib.status import Status, Verdict

CRITICAL = Verdict(Status.CRITICAL, "quorum lost")


@pytest.fixture
def policy(db, region):
    slack = Channel.objects.create(name="Team", target="team@example.com")
    pager = Channel.objects.create(name="On-call", target="oncall@example.com")
    policy = EscalationPolicy.objects.create(name="Critical")
    policy.levels.create(delay_minutes=0).channels.add(slack)
    policy.levels.create(delay_minutes=10).channels.add(pager)
    rule = Rule.objects.create(name="Critical", min_severity="critical", escalation=policy)
    rule.channels.add(Channel.objects.create(name="Log", target="log@example.com"))
    return policy


def recipients() -> list[str]:
    return [m.to[0] for m in mail.outbox]


def test_nobody_acknowledges_so_the_second_level_gets_it_after_its_delay(gadget, policy):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        alerts.record(gadget, CRITICAL)
        tasks.sweep()
    assert sorted(recipients()) == ["log@example.com", "team@example.com"]
    with time_machine.travel(start + timedelta(minutes=9), tick=False):
        tasks.sweep()
    assert "oncall@example.com" not in recipients()
    with time_machine.travel(start + timedelta(minutes=10, seconds=1), tick=False):
        tasks.sweep()
    assert recipients()[-1] == "oncall@example.com"
    assert mail.outbox[-1].subject.startswith("ESCALATED (level 2, not acknowledged) CRITICAL")
    incident = Incident.objects.get()
    assert incident.escalation_level == 2 and incident.next_escalation is None
    (step,) = IncidentEvent.objects.filter(kind="escalated")
    assert step.text.startswith("Level 2 (On-call): not acknowledged 10 min")
    with time_machine.travel(start + timedelta(minutes=30), tick=False):
        tasks.sweep()  # no third level: nothing more
    assert recipients().count("oncall@example.com") == 1

    alerts.record(gadget, Verdict(Status.OK, "quorum back"))  # the recovery reaches every level
    tasks.sweep()
    assert sorted(recipients()[-3:]) == [
        "log@example.com",
        "oncall@example.com",
        "team@example.com",
    ]


def test_acknowledged_before_its_delay_the_second_level_never_hears_of_it(
    gadget, policy, django_user_model
):
    operator = django_user_model.objects.create_user("op")
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        alerts.record(gadget, CRITICAL)
        tasks.sweep()
    with time_machine.travel(start + timedelta(minutes=5), tick=False):
        assert Incident.objects.get().acknowledge(operator)
    with time_machine.travel(start + timedelta(hours=2), tick=False):
        tasks.sweep()
    assert "oncall@example.com" not in recipients()
    assert not IncidentEvent.objects.filter(kind="escalated").exists()
    (ack,) = IncidentEvent.objects.filter(kind="acknowledged")
    assert ack.user == operator


def test_the_timeline_shows_each_step_on_the_page_and_in_the_api(gadget, policy, admin_client):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        alerts.record(gadget, CRITICAL)
    with time_machine.travel(start + timedelta(minutes=11), tick=False):
        tasks.sweep()
    incident = Incident.objects.get()
    with time_machine.travel(start + timedelta(minutes=12), tick=False):
        admin_client.post(f"/alerts/incidents/{incident.pk}/acknowledge/", {"next": "incident"})
    steps = admin_client.get(f"/api/alerts/incidents/{incident.pk}/timeline/").json()
    assert [s["kind"] for s in steps] == ["change", "escalated", "acknowledged"]
    assert steps[2]["by"] == "admin"
    page = admin_client.get(f"/alerts/incidents/{incident.pk}/").content.decode()
    assert "Level 2 (On-call)" in page and "acknowledged" in page


def test_admins_write_policies_through_the_api_and_bad_levels_are_refused(admin_client, db):
    channel = Channel.objects.create(name="Team", target="team@example.com")
    url = "/api/alerts/escalation-policies/"
    bad = admin_client.post(
        url, {"name": "x", "levels": [{"delay_minutes": -1, "channels": [channel.pk]}]},
        content_type="application/json",
    )  # fmt: skip
    assert bad.status_code == 400 and not EscalationPolicy.objects.exists()
    made = admin_client.post(
        url, {"name": "Ops", "levels": [{"delay_minutes": 0, "channels": [channel.pk]},
                                         {"delay_minutes": 15, "channels": [channel.pk]}]},
        content_type="application/json",
    )  # fmt: skip
    assert made.status_code == 201, made.content
    assert [lv["delay_minutes"] for lv in made.json()["levels"]] == [0, 15]

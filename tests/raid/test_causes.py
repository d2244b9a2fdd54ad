"""Incidents by cause for RAID: one storage server gone takes five arrays (and the stack on
them) into one incident naming the server, sent once per channel; a host that stopped
reporting is one incident too."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.alerts import delivery
from apps.alerts.models import Cause, Channel, Incident, Notification, Rule
from apps.raid.collect import ingest, mark_silent_hosts
from apps.raid.demo import SEED_ARRAYS, seed_layout_mdstat

pytestmark = pytest.mark.django_db

STORAGE_B = [disks[1] for disks in SEED_ARRAYS.values()]  # sdg..sdk


@pytest.fixture
def oncall(db):
    channel = Channel.objects.create(name="On call", target="oncall@example.com")
    rule, _ = Rule.objects.get_or_create(is_default=True, defaults={"name": "Default"})
    rule.channels.add(channel)
    return channel


@pytest.fixture(autouse=True)
def no_hold(settings):
    settings.VIGIL_ALERT_HOLD_SECONDS = 0
    settings.VIGIL_ALERT_REPEAT_HOLD_SECONDS = 0


def test_one_storage_server_gone_is_one_incident_naming_it_and_its_arrays(host, oncall, mailoutbox):
    ingest(host, seed_layout_mdstat())
    ingest(host, seed_layout_mdstat(failed=STORAGE_B))
    (cause,) = Cause.objects.all()
    assert cause.label == "storage server storage-b" and cause.closed is None
    labels = sorted(i.subject_label for i in cause.incidents.all())
    assert labels == sorted(f"storage-client:md{n}" for n in (1, 2, 3, 4, 5, 99))
    sent = Notification.objects.filter(state=Notification.State.PENDING)
    assert sent.count() == 1  # the others are held back as inhibited, listed on the incident
    assert Notification.objects.filter(state=Notification.State.INHIBITED).count() == 5
    delivery.send_due()
    (message,) = mailoutbox
    assert "storage server storage-b" in message.subject
    assert "storage-client:md5" in message.subject or "6 arrays" in message.subject

    ingest(host, seed_layout_mdstat())  # the server is back: every array recovers
    cause.refresh_from_db()
    assert cause.closed is not None
    assert not Incident.objects.filter(closed=None).exists()
    delivery.send_due()
    assert len(mailoutbox) == 2
    assert mailoutbox[1].subject.startswith("RECOVERED")
    assert "storage server storage-b" in mailoutbox[1].subject


def test_two_servers_losing_disks_are_not_one_cause(host, oncall):
    ingest(host, seed_layout_mdstat())
    ingest(host, seed_layout_mdstat(failed=["sdb", "sdg"]))  # md1 loses a disk on a and on b
    assert not Cause.objects.exists()


def test_a_host_that_stopped_reporting_is_one_incident(host, oncall, mailoutbox):
    ingest(host, seed_layout_mdstat())
    mark_silent_hosts(timezone.now() + timedelta(days=1))
    (cause,) = Cause.objects.all()
    assert cause.label == "host storage-client: no report"
    assert cause.incidents.count() == 6
    delivery.send_due()
    assert len(mailoutbox) == 1


def test_the_incident_by_cause_on_its_page_and_in_the_api(host, oncall, admin_client):
    ingest(host, seed_layout_mdstat())
    ingest(host, seed_layout_mdstat(failed=STORAGE_B))
    cause = Cause.objects.get()
    page = admin_client.get(f"/alerts/causes/{cause.pk}/").content.decode()
    assert "storage server storage-b" in page and "storage-client:md4" in page
    assert "inhibited" in page.lower()
    assert f'href="/alerts/causes/{cause.pk}/"' in admin_client.get("/alerts/").content.decode()
    body = admin_client.get("/api/alerts/causes/?open=true").json()
    (item,) = body["results"]
    assert item["label"] == "storage server storage-b"
    subjects = {s["subject_label"]: s["inhibited"] for s in item["subjects"]}
    assert len(subjects) == 6 and sum(subjects.values()) == 5


def test_an_array_failing_for_a_second_reason_is_sent_alone_and_hears_its_own_recovery(
    host, oncall, mailoutbox
):
    ingest(host, seed_layout_mdstat())
    ingest(host, seed_layout_mdstat(failed=STORAGE_B))
    delivery.send_due()
    assert len(mailoutbox) == 1  # the cause
    # md5 loses storage-a's disk too: the stack on it can lose nothing more, for two domains
    ingest(host, seed_layout_mdstat(failed=[*STORAGE_B, "sdf"]))
    delivery.send_due()
    assert len(mailoutbox) == 2
    alone = mailoutbox[1].subject
    assert "storage-client:md99" in alone and "storage server" not in alone
    ingest(host, seed_layout_mdstat())  # both servers back: everything recovers
    delivery.send_due()
    assert Cause.objects.get().closed is not None
    md99 = Notification.objects.filter(
        transition__subject_label="storage-client:md99", transition__new_status="ok"
    )
    assert {n.state for n in md99} == {"sent"}  # told of it alone: hears it recovered
    text = " ".join(m.subject + m.body for m in mailoutbox[2:])
    assert "storage server storage-b" in text and "storage-client:md99" in text


def test_acknowledging_the_cause_acknowledges_every_subject(host, oncall, client, operator):
    ingest(host, seed_layout_mdstat())
    ingest(host, seed_layout_mdstat(failed=STORAGE_B))
    cause = Cause.objects.get()
    client.force_login(operator)
    page = client.get(f"/alerts/causes/{cause.pk}/").content.decode()
    assert "Acknowledge every subject" in page
    answer = client.post(f"/api/alerts/causes/{cause.pk}/acknowledge/")
    assert answer.status_code == 200
    assert not Incident.objects.filter(closed=None, acknowledged=None).exists()
    assert Incident.objects.filter(acknowledged_by=operator).count() == 6


def test_a_viewer_may_not_acknowledge_a_cause(host, oncall, client, viewer):
    ingest(host, seed_layout_mdstat())
    ingest(host, seed_layout_mdstat(failed=STORAGE_B))
    cause = Cause.objects.get()
    client.force_login(viewer)
    assert client.post(f"/alerts/causes/{cause.pk}/acknowledge/").status_code == 403
    assert client.post(f"/api/alerts/causes/{cause.pk}/acknowledge/").status_code == 403
    assert not Incident.objects.exclude(acknowledged=None).exists()

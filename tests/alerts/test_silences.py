"""Silences that end well: what they held back and is still failing is sent once, at the end."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.utils import timezone

from apps import alerts
from apps.alerts import delivery, routing
from apps.alerts.models import Incident, Notification, Silence
from apps.lib.status import Status, Verdict

pytestmark = pytest.mark.django_db

CRITICAL = Verdict(Status.CRITICAL, "array md3 degraded")
WARNING = Verdict(Status.WARNING, "array md3 rebuilding")
OK = Verdict(Status.OK, "array md3 clean")


@pytest.fixture
def silence(region, user):
    return Silence.objects.create(
        region=region, ends=timezone.now() + timedelta(hours=1), author=user
    )


def at(when):
    return time_machine.travel(when, tick=False)


def test_a_subject_still_failing_when_its_silence_ends_is_sent_once(make_gadgets, oncall, silence):
    failing, recovered = make_gadgets(2)
    alerts.record(failing, CRITICAL)
    alerts.record(failing, WARNING)  # still failing, changed during the silence
    alerts.record(recovered, CRITICAL)
    alerts.record(recovered, OK)  # recovered during the silence: nothing to say
    delivery.send_due()
    assert mail.outbox == []
    assert [i.subject_label for i in routing.held_by(silence)] == ["gadget g00"]

    end = silence.ends + timedelta(seconds=1)
    with at(end):
        assert routing.release_ended_silences(timezone.now()) == 1
        delivery.send_due()
        assert routing.release_ended_silences(timezone.now()) == 0  # released once
    (message,) = mail.outbox
    assert message.subject == "WARNING lab Gadgets gadget g00: array md3 rebuilding"
    with at(end + timedelta(minutes=5)):
        routing.release_ended_silences(timezone.now())
        delivery.send_due()
    assert len(mail.outbox) == 1


def test_a_silence_ended_early_releases_what_it_held(gadget, oncall, silence, operator, client):
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    assert mail.outbox == []
    client.force_login(operator)
    response = client.post(f"/alerts/silences/{silence.pk}/expire/")
    assert response.status_code == 302
    delivery.send_due()
    assert [m.subject for m in mail.outbox] == [
        "CRITICAL lab Gadgets gadget g1: array md3 degraded"
    ]


def test_a_subject_under_two_silences_waits_for_the_last(gadget, oncall, silence, user):
    longer = Silence.objects.create(
        region=silence.region, ends=silence.ends + timedelta(hours=1), author=user
    )
    alerts.record(gadget, CRITICAL)
    with at(silence.ends + timedelta(seconds=1)):
        assert routing.release_ended_silences(timezone.now()) == 0
    with at(longer.ends + timedelta(seconds=1)):
        assert routing.release_ended_silences(timezone.now()) == 1
        delivery.send_due()
    assert len(mail.outbox) == 1


def test_subjects_released_together_share_one_email(make_gadgets, oncall, silence):
    for gadget in make_gadgets(5):
        alerts.record(gadget, CRITICAL)
    with at(silence.ends + timedelta(seconds=1)):
        routing.release_ended_silences(timezone.now())
        assert delivery.send_due() == 1
    (message,) = mail.outbox
    assert message.subject.startswith("5 changes in lab: CRITICAL Gadgets gadget g00")


def test_the_silence_page_shows_what_it_is_holding_back(gadget, oncall, silence, client, user):
    alerts.record(gadget, CRITICAL)
    client.force_login(user)
    page = client.get(f"/alerts/silences/{silence.pk}/").content.decode()
    assert "Holding back 1 alert" in page
    assert "gadget g1" in page and "array md3 degraded" in page
    incidents = client.get("/alerts/").content.decode()
    assert "holds back 1" in incidents


def test_a_region_turned_back_on_sends_what_is_still_failing(make_gadgets, oncall, region):
    failing, recovered = make_gadgets(2)
    region.enabled = False
    region.save()
    alerts.record(failing, CRITICAL)
    alerts.record(recovered, CRITICAL)
    alerts.record(recovered, OK)
    assert not Notification.objects.exists()
    region.enabled = True
    region.save()
    routing.region_turned_on(region.pk, timezone.now())  # what region_saved does on commit
    delivery.send_due()
    assert [m.subject for m in mail.outbox] == [
        "CRITICAL lab Gadgets gadget g00: array md3 degraded"
    ]
    assert Incident.objects.filter(closed=None).count() == 1


def test_turning_a_region_on_queues_its_alerts_when_the_save_commits(
    gadget, oncall, region, django_capture_on_commit_callbacks
):
    region.enabled = False
    region.save()
    alerts.record(gadget, CRITICAL)
    region.enabled = True
    with django_capture_on_commit_callbacks(execute=True):
        region.save()
    assert Notification.objects.get().state == "pending"


def test_the_sweep_wakes_a_release_at_the_end_of_a_silence_ending_before_the_next_sweep(
    gadget, oncall, region, user
):
    from django.core.cache import cache

    from apps.alerts import tasks

    soon = Silence.objects.create(
        region=region, ends=timezone.now() + timedelta(seconds=10), author=user
    )
    later = Silence.objects.create(
        region=region, ends=timezone.now() + timedelta(hours=1), author=user
    )
    tasks.sweep()  # queues release_silences(eta=soon.ends) on the (in-memory) broker
    assert cache.get(f"vigil:alerts:silence-end:{soon.ends.timestamp():.3f}") == 1
    assert cache.get(f"vigil:alerts:silence-end:{later.ends.timestamp():.3f}") is None
    alerts.record(gadget, CRITICAL)
    with at(soon.ends):  # what the woken task does at the silence's end
        assert tasks.release_silences() == 0  # the hour-long silence still holds it
    with at(later.ends):
        assert tasks.release_silences() == 1
    assert len(mail.outbox) == 1


def test_a_silence_saved_to_end_before_the_next_sweep_is_woken_at_its_end(
    region, user, django_capture_on_commit_callbacks
):
    from django.core.cache import cache

    with django_capture_on_commit_callbacks(execute=True):
        soon = Silence.objects.create(
            region=region, ends=timezone.now() + timedelta(seconds=5), author=user
        )
    assert cache.get(f"vigil:alerts:silence-end:{soon.ends.timestamp():.3f}") == 1

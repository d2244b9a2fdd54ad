from __future__ import annotations

from datetime import UTC

import pytest

from apps import alerts
from apps.alerts.models import Incident, Transition
from apps.lib.status import Status, Verdict
from apps.regions.models import Region
from tests.concern_app.models import Gadget

pytestmark = pytest.mark.django_db


@pytest.fixture
def gadget():
    region = Region.objects.create(kind=Region.Kind.SITE, code="lab")
    return Gadget.objects.create(region=region, name="g1")


def test_it_writes_a_transition_when_the_status_changes(gadget):
    flip = alerts.record(gadget, Verdict(Status.CRITICAL, "on fire", {"temperature_c": 91.5}))
    assert flip is not None
    assert (flip.old_status, flip.new_status, flip.reason) == ("unknown", "critical", "on fire")
    assert flip.concern == "gadgets" and flip.subject_label == "gadget g1"
    assert flip.figures == {"temperature_c": 91.5} and flip.subject == gadget
    gadget.refresh_from_db()
    assert gadget.status == "critical" and gadget.status_changed == flip.created


def test_it_writes_nothing_while_the_status_stays_but_keeps_the_reason_fresh(gadget):
    alerts.record(gadget, Verdict(Status.WARNING, "warm"))
    assert alerts.record(gadget, Verdict(Status.WARNING, "warmer")) is None
    gadget.refresh_from_db()
    assert gadget.reason == "warmer"
    assert Transition.objects.count() == 1


def test_an_open_incident_gives_the_subject_s_current_reason(gadget):
    alerts.record(gadget, Verdict(Status.WARNING, "md2: recovery 37.4 % done"))
    alerts.record(gadget, Verdict(Status.WARNING, "md2: recovery 47.9 % done"))
    assert Incident.objects.get(closed=None).reason == "md2: recovery 47.9 % done"
    alerts.record_many([(gadget, Verdict(Status.WARNING, "md2: recovery 61.0 % done"))])
    assert Incident.objects.get(closed=None).reason == "md2: recovery 61.0 % done"
    alerts.record(gadget, Verdict(Status.OK, "md2 is clean"))
    alerts.record(gadget, Verdict(Status.OK, "md2 is clean; checked"))
    assert Incident.objects.get().reason == "md2 is clean"  # closed: as it ended


def test_it_lets_only_one_of_two_racing_workers_write_the_transition(gadget):
    first = Gadget.objects.get(pk=gadget.pk)
    second = Gadget.objects.get(pk=gadget.pk)  # read before the first one saved
    assert alerts.record(first, Verdict(Status.CRITICAL, "down")) is not None
    assert alerts.record(second, Verdict(Status.CRITICAL, "down")) is None
    assert second.status == "critical"  # it learnt what the winner wrote
    assert Transition.objects.count() == 1


def test_it_keeps_figures_that_json_cannot_hold_as_text(gadget):
    from datetime import datetime

    when = datetime(2026, 11, 22, tzinfo=UTC)
    flip = alerts.record(gadget, Verdict(Status.OK, "fine", {"since": when, "ids": ["a", 1]}))
    assert flip.figures == {"since": str(when), "ids": ["a", 1]}


def test_it_records_many_subjects_with_the_reasons_in_one_batch_and_flips_one_by_one():
    region = Region.objects.create(kind=Region.Kind.SITE, code="lab")
    steady, flipping, raced = (
        Gadget.objects.create(region=region, name=n, status="ok", reason="fine")
        for n in ("g1", "g2", "g3")
    )
    Gadget.objects.filter(pk=raced.pk).update(status="warning")  # another worker moved it
    moved = alerts.record_many(
        [
            (steady, Verdict(Status.OK, "still fine")),
            (flipping, Verdict(Status.CRITICAL, "down")),
            (raced, Verdict(Status.OK, "fine, says a stale reader")),
        ]
    )
    assert [(t.subject, t.new_status) for t in moved] == [(flipping, "critical")]
    reasons = dict(Gadget.objects.values_list("name", "reason"))
    # The batch keeps the compare-and-set: a subject whose status moved keeps its reason.
    assert reasons == {"g1": "still fine", "g2": "down", "g3": "fine"}
    assert steady.reason == "still fine"

"""Recurring maintenance windows: weekly days and hours in a named time zone. While an
occurrence is open, what it matches is held back; when it closes, what is still failing is
sent (once), and what recovered meanwhile is not. The window is set to open a minute ahead
and close two minutes later; time moves with time_machine, the sweep does the rest."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import time_machine
from django.core import mail
from django.utils import timezone

from apps import alerts
from apps.alerts import tasks
from apps.alerts.models import MaintenanceWindow, Notification
from apps.alerts.schedule import Weekly, check
from apps.lib.status import Status, Verdict

CRITICAL = Verdict(Status.CRITICAL, "array degraded")
BERLIN = "Europe/Berlin"
MAX = 7 * 24 * 60  # a window open all week


def subjects() -> list[str]:
    return [m.subject for m in mail.outbox]


def test_a_weekly_window_holds_while_open_and_sends_what_still_fails_at_its_end(
    region, make_gadgets, oncall
):
    before, held, recovers = make_gadgets(3)
    now = timezone.now().replace(microsecond=0)
    opens = (now + timedelta(minutes=1)).astimezone(ZoneInfo(BERLIN))
    window = MaintenanceWindow(
        name="Weekly RAID check", region=region, days=[opens.weekday()], start=opens.time(),
        minutes=2, time_zone=BERLIN,
    )  # fmt: skip
    window.full_clean()
    window.save()

    with time_machine.travel(now, tick=False):
        alerts.record(before, CRITICAL)  # not open yet: sent at once
        tasks.sweep()
    assert len(subjects()) == 1 and "g00" in subjects()[0]
    with time_machine.travel(opens + timedelta(seconds=10), tick=False):
        alerts.record(held, CRITICAL)
        alerts.record(recovers, CRITICAL)
        tasks.sweep()
    assert len(subjects()) == 1  # held
    assert Notification.objects.filter(state="silenced").count() == 2
    with time_machine.travel(opens + timedelta(seconds=40), tick=False):
        alerts.record(recovers, Verdict(Status.OK, "back"))
        tasks.sweep()
    assert len(subjects()) == 1
    with time_machine.travel(opens + timedelta(minutes=2, seconds=1), tick=False):
        tasks.sweep()  # closed: what still fails is sent, once
        tasks.sweep()
    assert len(subjects()) == 2
    assert "g01" in subjects()[1] and "g02" not in subjects()[1]


def test_a_window_of_another_region_holds_nothing(region, gadget, oncall):
    from apps.regions.models import Region

    other = Region.objects.create(kind=Region.Kind.SITE, code="far", name="Far")
    MaintenanceWindow.objects.create(
        name="far", region=other, days=list(range(7)), start=time(0, 0), minutes=MAX,
        time_zone="UTC",
    )  # fmt: skip
    alerts.record(gadget, CRITICAL)
    tasks.sweep()
    assert len(mail.outbox) == 1


def test_the_schedule_follows_the_zone_and_runs_past_midnight():
    weekly = Weekly(frozenset({6}), time(23, 0), 120, BERLIN)  # Sunday 23:00-01:00 Berlin
    sunday_late = datetime(2026, 11, 29, 22, 30, tzinfo=UTC)  # 23:30 in Berlin (CET)
    assert weekly.open_at(sunday_late) is not None
    monday = datetime(2026, 11, 29, 23, 59, tzinfo=UTC)  # 00:59 Monday in Berlin
    assert weekly.open_at(monday) is not None
    assert weekly.open_at(datetime(2026, 11, 30, 0, 1, tzinfo=UTC)) is None
    summer = datetime(2026, 7, 5, 21, 30, tzinfo=UTC)  # 23:30 CEST
    assert weekly.open_at(summer) is not None
    assert weekly.last_closed(datetime(2026, 11, 30, 1, 0, tzinfo=UTC))[1] == datetime(
        2026, 11, 30, 0, 0, tzinfo=UTC
    )


def test_bad_schedules_are_refused_in_words(admin_client, db):
    assert set(check([7], 0, "Mars/Olympus")) == {"days", "minutes", "time_zone"}
    answer = admin_client.post(
        "/api/alerts/maintenance-windows/",
        {"name": "x", "days": [9], "start": "02:00", "minutes": 60, "time_zone": "Nowhere"},
        content_type="application/json",
    )
    assert answer.status_code == 400
    assert set(answer.json()["fields"]) >= {"days", "time_zone"}
    assert not MaintenanceWindow.objects.exists()
    made = admin_client.post(
        "/api/alerts/maintenance-windows/",
        {"name": "Sunday patching", "days": [6], "start": "02:00", "minutes": 90,
         "time_zone": BERLIN},
        content_type="application/json",
    )  # fmt: skip
    assert made.status_code == 201, made.content
    assert made.json()["next_opens"]


def test_operators_may_not_edit_windows(client, django_user_model, db):
    from django.contrib.auth.models import Group

    operator = django_user_model.objects.create_user("op", password="pw-long-enough-1")
    operator.groups.add(Group.objects.get_or_create(name="Operator")[0])
    client.force_login(operator)
    answer = client.post(
        "/api/alerts/maintenance-windows/",
        {"name": "x", "days": [1], "start": "02:00", "minutes": 60, "time_zone": "UTC"},
        content_type="application/json",
    )
    assert answer.status_code == 403

"""Recurring maintenance windows: weekly days and hours in a named time zone. While an
occurrence is open, what it matches is held back; when it closes, what is still failing is
sent (once), and what recovered meanwhile is not. The window is set to open a minute ahead
and close two minutes later; time moves with time_machine, the sweep does the rest."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.core import mail
from django.utils import timezone

from apps import alerts
from apps.alerts import tasks
from apps.alerts.models import MaintenanceWindow, Notification
from apps.alerts.schedule import Cron, Weekly, check, check_cron
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


# Cron-like windows: five fields in a time zone, expanded by dateutil.rrule. Every "now" is
# given, so nothing here depends on the time of day the tests run at.


def test_a_cron_window_opens_at_each_time_its_rule_names_in_its_zone():
    first_sunday = Cron("0 2 1-7 * sun", 60, BERLIN)  # crontab: day 1-7 OR a Sunday
    sunday = datetime(2026, 11, 29, 1, 30, tzinfo=UTC)  # 02:30 Berlin, a Sunday, the 29th
    assert first_sunday.open_at(sunday) == (
        datetime(2026, 11, 29, 1, 0, tzinfo=UTC),
        datetime(2026, 11, 29, 2, 0, tzinfo=UTC),
    )
    tuesday_the_first = datetime(2026, 12, 1, 1, 15, tzinfo=UTC)
    assert first_sunday.open_at(tuesday_the_first) is not None
    assert first_sunday.open_at(datetime(2026, 12, 8, 1, 15, tzinfo=UTC)) is None  # Tue 8th
    nightly = Cron("30 1 * * *", 30, "America/New_York")
    summer = datetime(2026, 7, 1, 5, 40, tzinfo=UTC)  # 01:40 EDT
    winter = datetime(2026, 12, 1, 6, 40, tzinfo=UTC)  # 01:40 EST
    assert nightly.open_at(summer) and nightly.open_at(winter)
    assert nightly.open_at(datetime(2026, 12, 1, 5, 40, tzinfo=UTC)) is None
    assert nightly.last_closed(winter + timedelta(hours=1))[1] == datetime(
        2026, 12, 1, 7, 0, tzinfo=UTC
    )


def test_a_cron_window_finds_its_next_opening_however_far():
    yearly = Cron("0 3 1 jan *", 120, "UTC")
    now = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    assert yearly.next_open(now)[0] == datetime(2027, 1, 1, 3, 0, tzinfo=UTC)
    every_ten = Cron("*/10 * * * *", 5, "UTC")
    assert every_ten.open_at(datetime(2026, 11, 26, 12, 4, tzinfo=UTC)) is not None
    assert every_ten.open_at(datetime(2026, 11, 26, 12, 6, tzinfo=UTC)) is None
    assert every_ten.describe() == "cron */10 * * * * for 5 min (UTC)"
    leap = Cron("0 0 29 2 *", 60, "UTC")
    assert leap.next_open(now)[0] == datetime(2028, 2, 29, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("expression", "words"),
    [
        ("0 2 * *", "Give five fields"),
        ("61 2 * * *", "The minute field '61'"),
        ("0 2 * * funday", "The day of week field 'funday'"),
        ("0 5-2 * * *", "lowest first"),
        ("*/0 * * * *", "a step is a whole number"),
        ("0 0 30,31 feb *", "it would never open"),
    ],
)
def test_a_cron_rule_cron_cannot_read_is_refused_in_words(expression, words):
    assert words in check_cron(expression)
    assert set(check([], 60, "UTC", expression)) == {"cron"}
    assert check([], 60, "UTC", "0 2 * * sun") == {}
    assert set(check([1], 60, "UTC", "0 2 * * sun")) == {"days"}  # one schedule, not two


def test_a_cron_window_holds_while_open_and_sends_what_still_fails_at_its_end(
    region, make_gadgets, oncall
):
    (held,) = make_gadgets(1)
    now = timezone.now().replace(second=0, microsecond=0)
    opens = (now + timedelta(minutes=1)).astimezone(ZoneInfo(BERLIN))
    window = MaintenanceWindow(
        name="Nightly backup", region=region, minutes=2, time_zone=BERLIN,
        cron=f"{opens.minute} {opens.hour} {opens.day} {opens.month} *",
    )  # fmt: skip
    window.full_clean()
    window.save()
    with time_machine.travel(opens + timedelta(seconds=10), tick=False):
        alerts.record(held, CRITICAL)
        tasks.sweep()
    assert subjects() == []
    with time_machine.travel(opens + timedelta(minutes=2, seconds=1), tick=False):
        tasks.sweep()
        tasks.sweep()
    assert len(subjects()) == 1 and "g00" in subjects()[0]


def test_admins_write_cron_windows_in_the_page_and_the_api(logged_in_client, admin_client, db):
    form = {"name": "Patch Tuesday", "cron": "0 22 8-14 * tue", "minutes": "240",
            "time_zone": BERLIN, "enabled": "on"}  # fmt: skip
    assert logged_in_client.post("/alerts/windows/new/", form).status_code == 302
    listed = logged_in_client.get("/alerts/windows/").content.decode()
    assert "cron 0 22 8-14 * tue for 240 min (Europe/Berlin)" in listed
    neither = logged_in_client.post("/alerts/windows/new/", {**form, "cron": ""})
    assert neither.status_code == 400 and "or a cron rule" in neither.content.decode()
    made = admin_client.post(
        "/api/alerts/maintenance-windows/",
        {"name": "Monthly", "cron": "0 3 1 * *", "minutes": 60, "time_zone": "UTC"},
        content_type="application/json",
    )
    assert made.status_code == 201, made.content
    assert made.json()["cron"] == "0 3 1 * *" and made.json()["next_opens"]


@pytest.mark.parametrize("zone", ["UTC", BERLIN, "America/New_York", "Australia/Lord_Howe"])
@pytest.mark.parametrize(
    "expression", ["*/20 * * * *", "30 2 * * *", "15 1,2,3 * * *", "0 2 1-7 * sun"]
)
def test_a_cron_windows_next_opening_walks_the_rule_as_the_days_around_it_say(zone, expression):
    """next_open walks the rule from just before now; the days expanded around now (what
    open_at and the timeline read) agree, on the nights the clocks change too."""
    from apps.alerts.schedule import _Recurring

    rule = Cron(expression, 30, zone)
    for night in (datetime(2026, 3, 29, 0, 30, tzinfo=UTC), datetime(2026, 10, 4, 15, 0, tzinfo=UTC),
                  datetime(2026, 11, 1, 5, 0, tzinfo=UTC)):  # fmt: skip
        for minutes in range(-240, 241, 37):
            now = night + timedelta(minutes=minutes, seconds=30)
            assert rule.next_open(now) == _Recurring.next_open(rule, now), now

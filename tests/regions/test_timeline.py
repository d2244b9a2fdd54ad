from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.contenttypes.models import ContentType

from apps.alerts.models import Transition
from apps.lib.status import Status
from apps.regions import timeline
from apps.regions.models import Region
from tests.concern_app.models import Gadget

END = datetime(2026, 11, 24, 15, 0, tzinfo=UTC)
START = END - timedelta(hours=24)


def change(subject: int, minutes_before_end: int, old: str, new: str) -> timeline.Change:
    return timeline.Change(
        subject=("gadgets", subject),
        label=f"g{subject}",
        at=END - timedelta(minutes=minutes_before_end),
        old=Status(old),
        new=Status(new),
        reason=f"{old} to {new}",
    )


def test_it_draws_a_lane_of_bands_per_subject_worst_first():
    built = timeline.build(
        [
            change(1, 60, "ok", "warning"),
            change(2, 58, "ok", "critical"),
            change(1, 30, "warning", "ok"),
        ],
        START,
        END,
    )
    assert [lane.label for lane in built.lanes] == ["g2", "g1"]
    g1 = built.lanes[1]
    assert [b.status for b in g1.bands] == ["ok", "warning", "ok"]
    assert g1.bands[1].x == pytest.approx(100 - 60 / 14.4, abs=0.01)
    assert sum(b.width for b in g1.bands) == pytest.approx(100)
    assert built.lanes[0].bands[-1].end == END  # still critical at the end of the window
    assert len(g1.marks) == 2 and g1.marks[0] == g1.bands[1].x  # a tick at each change


def test_it_ticks_whole_hours_for_a_day_and_whole_days_for_a_week():
    assert all(t.at.minute == 0 for t in timeline.ticks(START, END))
    week = timeline.ticks(END - timedelta(days=7), END)
    assert all(t.at.hour == 0 for t in week) and 5 <= len(week) <= 8


def test_an_unknown_span_is_the_default():
    assert timeline.parse_span("1y") == timeline.parse_span(None) == "24h"
    assert timeline.parse_span("7d") == "7d"


@pytest.fixture
def site_with_changes():
    site = Region.objects.create(kind=Region.Kind.SITE, code="lab", name="Lab")
    gadget = Gadget.objects.create(region=site, name="sprocket", status="critical")
    ref = {
        "content_type": ContentType.objects.get_for_model(Gadget),
        "object_id": gadget.pk,
        "region": site,
        "concern": "gadgets",
        "subject_label": "gadget sprocket",
    }
    now = datetime.now(UTC)
    Transition.objects.create(
        **ref,
        old_status="ok",
        new_status="warning",
        reason="=cmd|x",
        created=now - timedelta(hours=2),
    )
    Transition.objects.create(
        **ref,
        old_status="warning",
        new_status="critical",
        reason="worse",
        created=now - timedelta(days=3),
    )
    return site


@pytest.mark.django_db
def test_the_region_page_shows_the_timeline_with_a_list_and_a_csv(
    logged_in_client, site_with_changes
):
    page = logged_in_client.get(f"/regions/{site_with_changes.pk}/").content.decode()
    section = page.split('id="timeline"', 1)[1].split("</section>", 1)[0]
    assert (
        'class="band band-warning"' in section and 'class="band band-critical"' not in section
    )  # 24 h
    assert "The 1 change as a list" in section and "gadget sprocket" in section
    week = logged_in_client.get(f"/regions/{site_with_changes.pk}/?span=7d").content.decode()
    assert "The 2 changes as a list" in week


@pytest.mark.django_db
def test_the_timeline_zooms_alone_for_htmx_and_downloads_as_csv(
    logged_in_client, site_with_changes
):
    url = f"/regions/{site_with_changes.pk}/timeline/"
    alone = logged_in_client.get(url + "?span=7d", headers={"HX-Request": "true"})
    assert alone.status_code == 200 and "<html" not in alone.content.decode()
    assert "last 7d" in alone.content.decode()
    csv = logged_in_client.get(url + "?span=7d&format=csv")
    assert csv["Content-Type"].startswith("text/csv")
    lines = csv.content.decode().splitlines()
    assert lines[0] == "time_utc,concern,subject,old_status,new_status,reason"
    assert lines[1].split(",")[4] == "critical" and lines[2].endswith(",'=cmd|x")
    assert logged_in_client.get(url + "?span=" + "x" * 5000).status_code == 200  # bounded


def test_it_draws_maintenance_windows_clipped_to_the_axis_and_only_where_they_overlap():
    inside = (END - timedelta(hours=3), END - timedelta(hours=1))
    across_start = (START - timedelta(hours=1), START + timedelta(hours=6))
    before = (START - timedelta(hours=5), START - timedelta(hours=2))
    built = timeline.build(
        [],
        START,
        END,
        [("Backups (everything)", [before, across_start, inside]), ("Old", [before])],
    )
    (window,) = built.windows
    assert not built.empty and built.lanes == []
    assert [(s.x, s.width) for s in window.spans] == [(0.0, 25.0), (87.5, 8.333)]


@pytest.mark.django_db
def test_the_region_timeline_shows_the_windows_that_apply_to_its_subjects(
    logged_in_client, site_with_changes
):
    from apps.alerts.models import MaintenanceWindow
    from apps.regions.views import timeline_for

    other = Region.objects.create(kind=Region.Kind.SITE, code="far", name="Far")
    elsewhere = Gadget.objects.create(region=other, name="cog")
    gadget = Gadget.objects.get(name="sprocket")
    kind = ContentType.objects.get_for_model(Gadget)
    now = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)  # a Thursday
    nightly = {"cron": "0 3 * * *", "minutes": 60, "time_zone": "UTC"}
    MaintenanceWindow.objects.create(name="Nightly backup", region=site_with_changes, **nightly)
    MaintenanceWindow.objects.create(
        name="Sprocket swap", content_type=kind, object_id=gadget.pk, days=[3], start="09:00",
        minutes=30, time_zone="UTC",
    )  # fmt: skip
    MaintenanceWindow.objects.create(name="Far away", region=other, **nightly)
    MaintenanceWindow.objects.create(
        name="Cog", content_type=kind, object_id=elsewhere.pk, **nightly
    )
    MaintenanceWindow.objects.create(name="Off", enabled=False, **nightly)
    drawn = timeline_for(site_with_changes, "24h", now=now)["timeline"].windows
    assert [w.label for w in drawn] == [
        "Nightly backup (everything)",
        "Sprocket swap (gadget sprocket)",
    ]
    assert [s.opens.hour for s in drawn[0].spans] == [3]
    three_days = timeline_for(site_with_changes, "3d", now=now)["timeline"].windows
    assert len(three_days[0].spans) == 3
    page = logged_in_client.get(f"/regions/{site_with_changes.pk}/?span=7d").content.decode()
    assert 'class="band band-maintenance"' in page and "Maintenance: Nightly backup" in page
    assert "Far away" not in page and "Cog" not in page


@pytest.mark.django_db
def test_the_list_shows_the_newest_changes_and_links_to_more(logged_in_client, site_with_changes):
    from apps.regions import views

    first = Transition.objects.get(reason="worse")
    now = datetime.now(UTC)
    fields = ("content_type", "object_id", "region", "concern", "subject_label")
    Transition.objects.bulk_create(
        Transition(
            **{f: getattr(first, f) for f in fields},
            old_status="ok",
            new_status="warning",
            reason=f"flap {minutes}",
            created=now - timedelta(minutes=minutes + 1),
        )
        for minutes in range(views.TIMELINE_SHOWN)
    )
    url = f"/regions/{site_with_changes.pk}/"
    page = logged_in_client.get(url).content.decode()
    changes = page.split('class="timeline-changes"', 1)[1].split("</details>", 1)[0]
    assert f"The {views.TIMELINE_SHOWN + 1} changes as a list" in changes
    assert changes.count("<tr>") == views.TIMELINE_SHOWN + 1  # the header's row, the newest 50
    assert "flap 0" in changes and "=cmd|x" not in changes  # the oldest is left out
    assert "?span=24h&amp;changes=more#timeline" in changes and "Show the newest" in changes
    more = logged_in_client.get(url + "?changes=more").content.decode()
    listed = more.split('class="timeline-changes"', 1)[1].split("</details>", 1)[0]
    assert listed.startswith(" open") and "=cmd|x" in listed and "Show the newest" not in listed
    zoomed = logged_in_client.get(
        f"{url}timeline/?changes=more", headers={"HX-Request": "true"}
    ).content.decode()
    assert "=cmd|x" in zoomed


@pytest.mark.django_db
def test_the_timeline_is_shared_as_the_panels_are_one_rendering_per_time_zone(
    logged_in_client, site_with_changes, settings
):
    from django.core.cache import cache

    from apps.accounts.models import Preference

    settings.VIGIL_PAGE_CACHE_SECONDS = 10
    cache.clear()
    url = f"/regions/{site_with_changes.pk}/"
    first = logged_in_client.get(url).content.decode()
    assert "The 1 change as a list" in first
    Transition.objects.create(
        content_type=ContentType.objects.get_for_model(Gadget),
        object_id=Gadget.objects.get().pk,
        region=site_with_changes,
        concern="gadgets",
        subject_label="gadget sprocket",
        old_status="critical",
        new_status="ok",
        reason="better",
        created=datetime.now(UTC) - timedelta(minutes=5),
    )
    # Within the time fragments are shared, the same rendering (and the zoom alone too).
    assert "The 1 change as a list" in logged_in_client.get(url).content.decode()
    alone = logged_in_client.get(url + "timeline/")
    assert "The 1 change as a list" in alone.content.decode()
    # Another zone's viewer gets a rendering of their own, with the times in their zone.
    user = logged_in_client.get(url).wsgi_request.user
    Preference.objects.update_or_create(user=user, defaults={"time_zone": "Asia/Tokyo"})
    session = logged_in_client.session
    session.pop(Preference.SESSION_KEY, None)
    session.save()
    assert "The 2 changes as a list" in logged_in_client.get(url).content.decode()

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.accounts.models import Preference
from apps.accounts.timezones import zone
from apps.regions.templatetags.vigil_time import ago_text

pytestmark = pytest.mark.django_db


def test_the_header_toggle_cycles_the_theme_and_remembers_it_for_the_user(logged_in_client, user):
    page = logged_in_client.get("/").content.decode()
    assert 'data-theme="auto"' in page and 'name="theme" value="dark"' in page
    back = logged_in_client.post("/accounts/preferences/", {"theme": "dark", "next": "/alerts/"})
    assert back.status_code == 302 and back["Location"] == "/alerts/"
    assert Preference.objects.get(user=user).theme == "dark"
    assert 'data-theme="dark"' in logged_in_client.get("/").content.decode()
    elsewhere = logged_in_client.post(
        "/accounts/preferences/", {"theme": "light", "next": "https://evil.example/"}
    )
    assert elsewhere["Location"] == "/accounts/preferences/"  # no open redirect
    assert logged_in_client.post("/accounts/preferences/", {"theme": "x" * 500}).status_code == 400


def test_a_viewer_sets_a_time_zone_and_a_wrong_one_is_said_in_words(client, viewer):
    client.force_login(viewer)
    wrong = client.post("/accounts/preferences/", {"theme": "auto", "time_zone": "Mars/Olympus"})
    assert wrong.status_code == 400
    assert "is not a time zone Vigil knows" in wrong.content.decode()
    ok = client.post("/accounts/preferences/", {"theme": "auto", "time_zone": "Asia/Tokyo"})
    assert ok.status_code == 302 and Preference.objects.get(user=viewer).time_zone == "Asia/Tokyo"


def test_times_follow_the_users_zone_else_the_browsers_cookie_with_utc_on_hover(client, user):
    from django.template import Context, Template

    template = Template("{% load vigil_time %}{% when at %}")
    at = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
    client.force_login(user)
    client.cookies["vigil_tz"] = "America%2FNew_York"
    from django.utils import timezone

    assert zone("America/New_York") is not None and zone("../../etc/passwd") is None
    assert zone("x" * 5000) is None
    with timezone.override(zone("America/New_York")):
        html = template.render(Context({"at": at}))
    assert html == (
        '<time datetime="2026-11-24T12:00:00Z" title="2026-11-24 12:00:00 UTC">2026-11-24 07:00</time>'
    )
    from apps.accounts.timezones import viewer_zone

    request = client.get("/").wsgi_request
    assert str(viewer_zone(request)) == "America/New_York"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (10, "just now"),
        (180, "3 min ago"),
        (7200, "2 h ago"),
        (4 * 86400, "4 days ago"),
        (-300, "in 5 min"),
    ],
)
def test_it_says_how_long_ago(seconds, text):
    from datetime import timedelta

    now = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
    assert ago_text(now - timedelta(seconds=seconds), now) == text


def test_the_title_counts_open_critical_incidents_and_the_icon_shows_the_worst(logged_in_client):
    from apps import alerts
    from apps.lib.status import Status, Verdict
    from apps.regions.models import Region
    from tests.concern_app.models import Gadget

    page = logged_in_client.get("/").content.decode()
    assert "<title>Regions · Vigil</title>" in page and "favicon-ok.svg" in page
    region = Region.objects.create(kind=Region.Kind.SITE, code="lab", name="Lab")
    for name in ("a", "b"):
        gadget = Gadget.objects.create(region=region, name=name)
        alerts.record(gadget, Verdict(Status.CRITICAL, "broken"))
    page = logged_in_client.get("/").content.decode()
    assert "<title>(2 critical) Regions · Vigil</title>" in page and "favicon-critical.svg" in page


def test_the_polled_home_tiles_bring_the_title_and_icon_along(logged_in_client):
    polled = logged_in_client.get("/", headers={"HX-Request": "true"}).content.decode()
    assert polled.lstrip().startswith("<title>Regions · Vigil</title>")
    assert (
        'id="favicon"' in polled and 'hx-swap-oob="true"' in polled and "favicon-ok.svg" in polled
    )


def test_the_formats_written_directly_read_as_djangos_formatter_writes_them():
    from django.utils.dateformat import format as date_format

    from apps.regions.templatetags.vigil_time import _FAST

    for at in (datetime(2026, 1, 2, 3, 4, 5), datetime(999, 12, 31, 23, 59)):
        for fmt, fast in _FAST.items():
            assert fast(at) == date_format(at, fmt), fmt

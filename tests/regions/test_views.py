from __future__ import annotations

import pytest

from apps.regions.models import Account, Region

pytestmark = pytest.mark.django_db


def test_it_sends_anonymous_visitors_to_the_login_page(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_it_tells_a_new_user_what_to_configure(logged_in_client):
    page = logged_in_client.get("/").content.decode()
    assert "Nothing to watch yet" in page
    assert "Add your AWS account" in page or "ask an admin" in page.lower()


def test_it_shows_a_tile_per_enabled_region_and_site(logged_in_client):
    account = Account.objects.create(name="prod")
    Region.objects.create(
        account=account,
        code="eu-west-1",
        name="Europe (Ireland)",
        opt_in_status="opt-in-not-required",
    )
    Region.objects.create(account=account, code="ap-east-1", opt_in_status="opted-in")
    Region.objects.create(account=account, code="me-south-1", opt_in_status="not-opted-in")
    Region.objects.create(kind=Region.Kind.SITE, code="dc-berlin", name="Berlin DC")

    page = logged_in_client.get("/").content.decode()
    assert "Europe (Ireland)" in page
    assert "ap-east-1" in page and "opt-in region" in page
    assert "me-south-1" not in page
    assert "Berlin DC" in page


def test_it_shows_a_failing_account_on_its_tiles(logged_in_client):
    account = Account.objects.create(name="prod", last_error="AuthFailure: bad keys")
    Region.objects.create(account=account, code="eu-west-1", opt_in_status="opt-in-not-required")
    Account.objects.create(name="new", last_error="InvalidClientTokenId: nope")

    response = logged_in_client.get("/")
    page = response.content.decode()
    assert response.status_code == 200
    assert "AuthFailure: bad keys" in page
    assert "InvalidClientTokenId: nope" in page  # an account with no region yet gets a tile
    assert "badge-unknown" in page


def test_it_returns_only_the_tiles_to_htmx_polling(logged_in_client):
    account = Account.objects.create(name="prod")
    Region.objects.create(account=account, code="eu-west-1", opt_in_status="opt-in-not-required")
    page = logged_in_client.get("/", headers={"HX-Request": "true"}).content.decode()
    # The title and the icon come first (apps/regions/views.home), then the tiles alone.
    title, icon, tiles = page.lstrip().split("\n", 2)
    assert title.startswith("<title>") and icon.startswith('<link id="favicon"')
    assert tiles.lstrip().startswith('<section id="tiles"')
    assert "<html" not in page and "eu-west-1" in page


def test_it_shows_a_region_page(logged_in_client):
    account = Account.objects.create(name="prod")
    region = Region.objects.create(
        account=account, code="ap-east-1", name="Asia Pacific (Hong Kong)", opt_in_status="opted-in"
    )
    page = logged_in_client.get(f"/regions/{region.pk}/").content.decode()
    assert "Asia Pacific (Hong Kong)" in page and "Opted in" in page


def test_it_serves_the_health_check_without_login(client):
    assert client.get("/healthz").content == b"ok"


def test_the_health_check_answers_a_probe_by_address_whatever_the_allowed_hosts(client, settings):
    settings.ALLOWED_HOSTS = ["vigil.example.com"]
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/healthz", HTTP_HOST="127.0.0.1:8000").content == b"ok"
    assert client.get("/", HTTP_HOST="127.0.0.1:8000").status_code == 400  # the rest is checked


@pytest.mark.slow
def test_it_reads_the_home_page_in_a_constant_number_of_queries(logged_in_client):
    from tests.demo.pages import BIGGER, SMALL, queries

    small = queries(logged_in_client, "home", **SMALL)
    assert queries(logged_in_client, "home", **{**BIGGER, "regions": 6}) == small


@pytest.mark.slow
def test_it_reads_the_region_page_in_a_constant_number_of_queries(logged_in_client):
    from tests.demo.pages import BIGGER, SMALL, queries

    assert queries(logged_in_client, "region", **SMALL) == queries(
        logged_in_client, "region", **BIGGER
    )


@pytest.mark.slow
def test_a_big_region_shows_its_worst_subjects_first_and_links_to_all(logged_in_client):
    from apps.efs.models import FileSystem
    from apps.regions import concerns
    from apps.regions.views import PANEL_ROWS
    from tests.demo.pages import page_url, seed

    seed(filesystems=2 * (PANEL_ROWS + 5), regions=2, clusters=1, arrays=1, probes=1)
    url = page_url("region")
    page = logged_in_client.get(url)
    region = page.context["region"]
    concern = next(c for c in concerns.registered() if c.key == "efs")
    rows = concern.region_context(region, None)["rows"]
    severities = [row["fs"].status_enum.severity for row in rows]
    assert severities == sorted(severities, reverse=True)  # worst first
    html = page.content.decode()
    shown = [fs for fs in FileSystem.objects.all() if f"/efs/filesystems/{fs.pk}/" in html]
    assert len(shown) == PANEL_ROWS
    assert f"The {PANEL_ROWS} worst of {PANEL_ROWS + 5} file systems" in html
    everything = logged_in_client.get(url + "?all=1").content.decode()
    assert "worst of" not in everything
    assert all(f"/efs/filesystems/{row['fs'].pk}/" in everything for row in rows)


def test_it_shares_one_rendering_of_the_tiles_and_panels_for_a_few_seconds(
    logged_in_client, settings
):
    from django.core.cache import cache

    settings.VIGIL_PAGE_CACHE_SECONDS = 10
    cache.clear()
    region = Region.objects.create(kind=Region.Kind.SITE, code="lab", name="Lab")
    first = logged_in_client.get("/")
    assert "Lab" in first.content.decode()
    Region.objects.create(kind=Region.Kind.SITE, code="annex", name="Annex")
    # Within the time the tiles are cached, a viewer gets the same rendering, queried once.
    again = logged_in_client.get("/")
    assert "Annex" not in again.content.decode()
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as rendered:
        logged_in_client.get(f"/regions/{region.pk}/")
    with CaptureQueriesContext(connection) as shared:
        logged_in_client.get(f"/regions/{region.pk}/")
    assert len(shared) < len(rendered)  # the panels' queries ran once
    cache.clear()  # as when the seconds are over
    assert "Annex" in logged_in_client.get("/").content.decode()


def test_a_tile_names_the_worst_subject_of_each_concern_and_why(logged_in_client, site):
    from apps import alerts
    from apps.lib.status import Status, Verdict
    from tests.concern_app.models import Gadget

    worse, bad, fine = (Gadget.objects.create(region=site, name=n) for n in ("g1", "g2", "g3"))
    alerts.record(bad, Verdict(Status.WARNING, "md5: recovery 37.4 % done"))
    alerts.record(worse, Verdict(Status.CRITICAL, "md2: degraded, 2 of 3 members in sync"))
    alerts.record(fine, Verdict(Status.OK, "clean"))
    alerts.record(worse, Verdict(Status.CRITICAL, "md2: degraded; recovery 47.9 % done"))

    page = logged_in_client.get("/").content.decode()

    assert f'href="/gadgets/{worse.pk}/">gadget g1</a>: md2: degraded; recovery 47.9 % done' in page
    assert "md5" not in page  # one subject per concern: the worst
    assert "1 critical" in page and "1 warning" in page and "1 ok" in page


def test_a_fresh_start_says_the_first_collection_is_running(logged_in_client, site):
    from tests.concern_app.models import Gadget

    Gadget.objects.create(region=site, name="g1")  # never collected: unknown, as it starts

    page = logged_in_client.get("/").content.decode()

    assert "first collection running" in page and "Collecting</span>" in page
    assert "1 unknown" not in page and "badge-unknown" not in page

from __future__ import annotations

import pytest

from apps.regions import concerns
from apps.regions.models import Account, Region
from tests.concern_app.models import Gadget

pytestmark = pytest.mark.django_db


@pytest.fixture
def regions():
    account = Account.objects.create(name="prod")
    ireland = Region.objects.create(account=account, code="eu-west-1", opt_in_status="opted-in")
    tokyo = Region.objects.create(account=account, code="ap-northeast-1", opt_in_status="opted-in")
    return ireland, tokyo


def test_it_counts_subjects_per_region_concern_and_status(regions):
    ireland, tokyo = regions
    for status in ("ok", "ok", "critical"):
        Gadget.objects.create(region=ireland, name=status, status=status)
    Gadget.objects.create(region=tokyo, name="t", status="warning")

    counts = concerns.status_counts([ireland.pk, tokyo.pk])
    assert counts[ireland.pk]["gadgets"] == {"ok": 2, "critical": 1}
    assert counts[tokyo.pk]["gadgets"] == {"warning": 1}


def test_it_shows_the_worst_status_and_counts_on_a_tile(logged_in_client, regions):
    ireland, _ = regions
    Gadget.objects.create(region=ireland, name="a", status="ok")
    Gadget.objects.create(region=ireland, name="b", status="critical")
    page = logged_in_client.get("/").content.decode()
    ireland_tile = page.split("eu-west-1")[0].rsplit("<article", 1)[1]
    assert "tile-critical" in ireland_tile
    tile_rest = page.split("eu-west-1", 1)[1].split("</article>")[0]
    assert "Gadgets" in tile_rest and "1 critical" in tile_rest and "1 ok" in tile_rest


def test_it_counts_with_one_query_per_concern_whatever_the_fleet_size(
    logged_in_client, regions, django_assert_max_num_queries
):
    ireland, tokyo = regions
    Gadget.objects.bulk_create(
        Gadget(region=r, name=str(i), status="ok") for i in range(50) for r in (ireland, tokyo)
    )
    # A fixed 11 queries (session, user, their groups for the role, regions, accounts, the
    # channels whose configuration is broken for the banner, the open incidents for the title
    # and icon; on a session's first page its user's preferences, kept in the session, which is
    # then saved: three queries), then two or three per registered concern (not one per
    # subject): the counts, the worst subject of each region, and the failing regions.
    per_concern = sum(2 + (c.region_errors is not None) for c in concerns.registered())
    with django_assert_max_num_queries(11 + per_concern):
        logged_in_client.get("/")


def test_it_shows_each_concerns_panel_on_the_region_page(logged_in_client, regions):
    ireland, _ = regions
    Gadget.objects.create(region=ireland, name="sprocket", status="warning")
    page = logged_in_client.get(f"/regions/{ireland.pk}/").content.decode()
    heading = page.split('<h2 id="panel-gadgets">', 1)[1].split("</h2>", 1)[0]
    assert heading.startswith("Gadgets") and "badge-warning" in heading
    assert "sprocket: warning" in page


def test_it_lists_concerns_with_problems_first_and_collapses_the_empty_ones(
    logged_in_client, regions
):
    from apps.galera.models import Cluster

    ireland, _ = regions
    Cluster.objects.create(region=ireland, name="db", status="ok")
    Gadget.objects.create(region=ireland, name="sprocket", status="critical")
    page = logged_in_client.get(f"/regions/{ireland.pk}/").content.decode()

    assert page.index('id="panel-gadgets"') < page.index('id="panel-galera"')
    assert 'id="panel-raid"' not in page and 'id="panel-probes"' not in page
    empty = page.split('id="empty-concerns"', 1)[1].split("</p>", 1)[0]
    assert all(label in empty for label in ("EFS", "md-RAID", "Keep-alive"))
    assert f'?region={ireland.pk}">Add an md-RAID host</a>' in empty
    assert "Add a Galera cluster" not in empty


def test_a_viewer_sees_the_empty_concerns_without_add_links(client, viewer, regions):
    ireland, _ = regions
    client.force_login(viewer)
    page = client.get(f"/regions/{ireland.pk}/").content.decode()
    empty = page.split('id="empty-concerns"', 1)[1].split("</p>", 1)[0]
    assert "Not watched here" in empty and "<a " not in empty


def test_it_serves_each_concerns_panel_alone_for_polling(logged_in_client, regions):
    ireland, _ = regions
    Gadget.objects.create(region=ireland, name="sprocket", status="warning")
    panel = logged_in_client.get(f"/regions/{ireland.pk}/panels/gadgets/")
    assert panel.status_code == 200 and "sprocket: warning" in panel.content.decode()
    assert "<html" not in panel.content.decode()
    assert logged_in_client.get(f"/regions/{ireland.pk}/panels/nothing/").status_code == 404

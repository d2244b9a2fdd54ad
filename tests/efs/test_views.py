"""The region panel, the file system page and the API."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.efs import history
from apps.efs.metrics import GIB, Sample
from apps.efs.models import FileSystem, RegionCollection
from apps.lib.cloudwatch import align
from apps.regions.models import Account, Region

pytestmark = pytest.mark.django_db


@pytest.fixture
def fs() -> FileSystem:
    account = Account.objects.create(name="prod")
    region = Region.objects.create(
        account=account, code="eu-west-1", opt_in_status="opt-in-not-required"
    )
    fs = FileSystem.objects.create(
        region=region,
        filesystem_id="fs-0123abcd",
        name="builds",
        status="warning",
        reason="credits run out in ~6 h at the last 3 h's drain rate",
        figures={
            "io_limit_pct": 42.0,
            "throughput_utilisation_pct": 80.0,
            "credit_balance_bytes": 512 * GIB,
            "hours_to_exhaustion": 6.2,
            "credit_state": "draining",
            "standard_bytes": 100 * GIB,
        },
    )
    end = align(timezone.now() - timedelta(minutes=3))
    samples = [
        Sample(
            end - timedelta(minutes=60 - i),
            data_read_count=600.0,
            data_read_bytes=6e6,
            metered_bytes=3e8,
            permitted_throughput=1e7 * 1.0,
            burst_credit_balance=(512 + 60 - i) * GIB,
        )
        for i in range(60)
        if i != 30  # one minute never arrived
    ]
    history.save_samples({fs.pk: samples})
    return fs


def test_it_lists_file_systems_in_a_sortable_table_on_the_region_page(fs, logged_in_client):
    RegionCollection.objects.create(
        region=fs.region, last_error="AccessDenied: not authorized", last_error_at=timezone.now()
    )
    html = logged_in_client.get(reverse("regions:detail", args=[fs.region.pk])).content.decode()
    assert "data-sortable" in html and "builds" in html
    assert "42 %" in html and "80 %" in html and "6.2 h" in html and "512 GiB" in html
    assert "AccessDenied: not authorized" in html


def test_it_draws_gaps_as_gaps_on_the_file_system_page(fs, logged_in_client):
    page = logged_in_client.get(reverse("efs:filesystem_detail", args=[fs.pk]) + "?range=3h")
    assert page.status_code == 200
    ops = page.context["charts"]["ops"]
    read = ops["series"][0]["values"]
    assert read.count(10.0) == 59
    assert None in read[-40:]  # the missing minute, not a zero
    assert 0 not in read and 0.0 not in read
    html = page.content.decode()
    assert "Burst credits" in html and "Forecast" in html


def test_it_carries_each_chart_drawn_once_as_json_script_writes_it(fs, logged_in_client, settings):
    from django.utils.html import json_script

    settings.VIGIL_PAGE_CACHE_SECONDS = 60  # the scripts come from the drawing, with the forecast
    url = reverse("efs:filesystem_detail", args=[fs.pk]) + "?range=3h"
    for _ in range(2):  # drawn, then shared
        page = logged_in_client.get(url)
        html = page.content.decode()
        for key, chart in page.context["charts"].items():
            assert json_script(chart, f"efs-{key}") in html
        assert "Forecast" in json_script(page.context["charts"]["credits"], "x")


def test_the_30_second_poll_reads_the_live_part_without_charts_or_the_mode_comparison(
    fs, logged_in_client
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    url = reverse("efs:filesystem_detail", args=[fs.pk])
    with CaptureQueriesContext(connection) as full:
        logged_in_client.get(url)
    with CaptureQueriesContext(connection) as poll:
        live = logged_in_client.get(url, headers={"HX-Request": "true"})
    html = live.content.decode()
    assert html.lstrip().startswith('<div id="live"') and "<h1>" not in html
    assert "512 GiB" in html and "credits" in html  # the figures and the forecast
    assert "charts" not in live.context and "comparison" not in live.context
    assert len(poll.captured_queries) < len(full.captured_queries)


def three_hours(fs, mibps: float = 3e8 / 60 / 2**20, **extra) -> None:
    """Three hours of minutes of ``mibps`` metered, 10 reads/s of 10,000 bytes each."""
    end = align(timezone.now() - timedelta(minutes=3))
    history.save_samples(
        {
            fs.pk: [
                Sample(
                    end - timedelta(minutes=180 - i),
                    metered_bytes=mibps * 2**20 * 60,
                    data_read_bytes=6e6,
                    data_read_count=600.0,
                    **extra,
                )
                for i in range(180)
            ]
        }
    )


def test_the_page_compares_the_three_modes_and_says_what_the_best_would_save(fs, logged_in_client):
    FileSystem.objects.filter(pk=fs.pk).update(throughput_mode="provisioned", provisioned_mibps=64)
    fs.minutes.all().delete()
    three_hours(fs)
    page = logged_in_client.get(reverse("efs:filesystem_detail", args=[fs.pk]))
    c = page.context["comparison"]
    base = 100 * 50 / 1024
    rows = {r.mode: r for r in c.rows}
    assert [r.mode for r in c.rows] == ["bursting", "provisioned", "elastic"]
    assert rows["bursting"].monthly_usd == pytest.approx(30.0) and rows["bursting"].fits
    assert rows["provisioned"].monthly_usd == pytest.approx(30 + (5 - base) * 6)
    # 600 reads of 10,000 bytes a minute: under a data operation's 32 KiB minimum, each is
    # billed as 32,768 bytes (2018's 4 KiB minimum billed their 6e6 bytes), scaled to 730 h.
    read_gb = 600 * 32_768 * 60 * 730 / 2**30
    assert rows["elastic"].monthly_usd == pytest.approx(30 + read_gb * 0.03)
    assert c.current_usd == pytest.approx(30 + (64 - base) * 6)
    html = page.content.decode()
    assert "Bursting would save $354.70/month" in html
    assert "Bursting would cost $30/month: its 4.9 MiB/s baseline covers the 4.8 MiB/s mean" in html
    # eu-west-1 is not in the table: the page says whose prices it shows.
    assert "no EFS prices for eu-west-1 in Vigil&#x27;s table: us-east-1 prices shown" in html
    assert "(from 3 h of data, scaled to a month)" in html


def test_it_provisions_for_the_peak_at_the_asked_price(fs, logged_in_client):
    fs.minutes.all().delete()
    three_hours(fs)
    page = logged_in_client.get(
        reverse("efs:filesystem_detail", args=[fs.pk]) + "?provision=peak&price=10"
    )
    provisioned = next(r for r in page.context["comparison"].rows if r.mode == "provisioned")
    assert provisioned.provisioned_mibps == 5
    assert provisioned.throughput_usd == pytest.approx((5 - 100 * 50 / 1024) * 10)
    assert "provisioned at $10.00 per MiB/s-month" in page.content.decode()
    # Nonsense in the form is ignored, as the range is: the defaults apply.
    odd = logged_in_client.get(
        reverse("efs:filesystem_detail", args=[fs.pk]) + "?provision=max&price=-3"
    )
    assert odd.status_code == 200 and odd.context["comparison"].provision == "peak"
    assert odd.context["price"] is None


def test_it_says_when_there_is_too_little_data_to_compare(fs, logged_in_client):
    page = logged_in_client.get(reverse("efs:filesystem_detail", args=[fs.pk]))
    assert page.context["comparison"] is None  # 59 minutes of data
    assert "Not enough metered throughput" in page.content.decode()


def test_it_shows_headroom_request_sizes_clients_and_storage_by_class(fs, logged_in_client):
    FileSystem.objects.filter(pk=fs.pk).update(
        size_ia_bytes=40 * GIB,
        size_archive_bytes=900 * GIB,
        figures={**fs.figures, "headroom_ops": 2880.0, "headroom_ops_limit": 2880 / 0.84},
    )
    fs.minutes.all().delete()
    three_hours(fs, client_connections=4.0, metadata_bytes=512.0 * 60, metadata_count=60.0)
    page = logged_in_client.get(reverse("efs:filesystem_detail", args=[fs.pk]) + "?range=3h")
    html = page.content.decode()
    assert "I/O operations: 2,880 of ~3,430 ops/s" in html
    assert "Standard 100.0\xa0GB · IA 40.0\xa0GB · Archive 900.0\xa0GB" in html
    assert "read 9.8 KiB · write – KiB · metadata 0.5 KiB" in html
    assert "Data requests are metered (and billed by Elastic) as at least 32 KiB" in html
    assert "the read, metadata requests here average less" in html
    clients = page.context["charts"]["clients"]["series"][0]["values"]
    assert {v for v in clients if v is not None} == {4.0}
    sizes = page.context["charts"]["opsize"]["series"]
    assert [s["label"] for s in sizes] == ["Read", "Write", "Metadata"]


def test_it_shows_back_fill_progress(fs, logged_in_client):
    now = timezone.now()
    FileSystem.objects.filter(pk=fs.pk).update(
        backfill_from=now - timedelta(hours=10),
        backfill_to=now,
        collected_until=now - timedelta(hours=5),
    )
    html = logged_in_client.get(reverse("efs:filesystem_detail", args=[fs.pk])).content.decode()
    assert "Back-filling" in html and 'value="50"' in html


def test_it_filters_file_systems_in_the_api(fs, api_client, api_key):
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key()}")
    got = api_client.get("/api/efs/filesystems/", {"region": "eu-west-1", "status": "warning"})
    assert got.status_code == 200
    rows = got.json()["results"] if "results" in got.json() else got.json()
    assert [r["filesystem_id"] for r in rows] == ["fs-0123abcd"]
    assert rows[0]["figures"]["hours_to_exhaustion"] == 6.2
    none = api_client.get("/api/efs/filesystems/", {"status": "critical"}).json()
    assert (none["results"] if isinstance(none, dict) else none) == []
    assert api_client.get("/api/efs/filesystems/", {"account": "x"}).status_code == 400


def test_it_serves_series_at_a_chosen_resolution_with_null_gaps(fs, api_client, api_key):
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key()}")
    url = f"/api/efs/filesystems/{fs.pk}/series/"
    got = api_client.get(url).json()
    assert got["resolution"] == "minute"
    assert len(got["x"]) == len(got["read_ops"]) in (180, 181)
    assert got["read_ops"].count(10.0) == 59 and None in got["read_ops"]
    hourly = api_client.get(url, {"resolution": "hour"}).json()
    assert hourly["resolution"] == "hour" and set(hourly["read_ops"]) == {None}
    assert api_client.get(url, {"resolution": "week"}).status_code == 400
    assert api_client.get(url, {"start": "yesterday"}).status_code == 400


def test_it_refuses_writes_with_a_read_only_key(fs, api_client, api_key):
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key()}")
    assert api_client.delete(f"/api/efs/filesystems/{fs.pk}/").status_code in (403, 405)


def test_it_refreshes_the_region_panel_and_the_summary_as_htmx_partials(fs, logged_in_client):
    panel = logged_in_client.get(reverse("regions:panel", args=[fs.region.pk, "efs"]))
    html = panel.content.decode()
    assert panel.status_code == 200 and "<html" not in html and "builds" in html
    summary = logged_in_client.get(
        reverse("efs:filesystem_detail", args=[fs.pk]), HTTP_HX_REQUEST="true"
    )
    html = summary.content.decode()
    assert 'id="live"' in html and "timeseries" not in html


def test_a_region_whose_collection_fails_says_so_on_its_home_tile(fs, logged_in_client):
    RegionCollection.objects.create(
        region=fs.region,
        last_error="InvalidToken: The security token included in the request is invalid",
    )
    home = logged_in_client.get("/").content.decode()
    assert "Collection failing:" in home
    assert "EFS: InvalidToken: The security token included in the request is invalid" in home


def test_the_file_system_page_links_its_status_changes_and_alerts(fs, logged_in_client):
    from django.contrib.contenttypes.models import ContentType

    page = logged_in_client.get(reverse("efs:filesystem_detail", args=[fs.pk])).content.decode()
    content_type = ContentType.objects.get_for_model(fs).pk
    assert f'href="/alerts/history/{content_type}/{fs.pk}/"' in page


@pytest.mark.slow
def test_it_reads_the_file_system_page_in_a_constant_number_of_queries(logged_in_client):
    from tests.demo.pages import BIGGER, SMALL, queries

    small = queries(logged_in_client, "filesystem", **SMALL)
    assert queries(logged_in_client, "filesystem", **{**BIGGER, "days": 9}) == small


def test_it_draws_a_week_in_at_most_a_thousand_points_a_series(fs, logged_in_client):
    page = logged_in_client.get(reverse("efs:filesystem_detail", args=[fs.pk]) + "?range=7d")
    for chart in page.context["charts"].values():
        assert len(chart["x"]) <= 1000
    ops = page.context["charts"]["ops"]
    assert len(ops["x"]) in (672, 673)  # 15-minute points (the first one partly in range)
    read = [v for v in ops["series"][0]["values"] if v is not None]
    # 59 minutes of 10 reads/s over four buckets: still 10 reads/s, not diluted by the gap.
    assert read and all(v == pytest.approx(10.0) for v in read)
    assert "one point per 15 minutes" in page.content.decode()


def test_it_keeps_the_usage_behind_the_mode_comparison_for_an_hour(fs, logged_in_client, settings):
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    settings.VIGIL_EFS_COMPARISON_CACHE_SECONDS = 3600
    cache.delete(f"vigil:efs:usage:{fs.pk}")
    url = reverse("efs:filesystem_detail", args=[fs.pk])
    before = logged_in_client.get(url).context["comparison"]
    with CaptureQueriesContext(connection) as cached:
        after = logged_in_client.get(url).context["comparison"]
    settings.VIGIL_EFS_COMPARISON_CACHE_SECONDS = 0
    with CaptureQueriesContext(connection) as uncached:
        fresh = logged_in_client.get(url).context["comparison"]
    assert len(cached.captured_queries) < len(uncached.captured_queries)
    assert before == after == fresh
    cache.delete(f"vigil:efs:usage:{fs.pk}")


def test_the_charts_are_shared_within_their_minute_until_a_collection_ends(fs, settings):
    from django.core.cache import cache

    from apps.efs.views import _charts

    settings.VIGIL_PAGE_CACHE_SECONDS = 60
    cache.clear()
    now = timezone.now().replace(second=5)
    start = now - timedelta(hours=3)
    drawn, _scripts, has_data, _sizes = _charts(fs, "3h", start, now, 60)
    read = drawn["ops"]["series"][0]["values"]
    assert has_data and read.count(10.0) == 59 and None in read[-40:]
    gap = align(timezone.now() - timedelta(minutes=3)) - timedelta(minutes=30)
    history.save_samples({fs.pk: [Sample(gap, data_read_count=1200.0)]})  # the late minute
    later = now + timedelta(seconds=50)
    assert _charts(fs, "3h", later - timedelta(hours=3), later, 60)[0] == drawn  # shared
    fs.collected_until = now
    fs.save(update_fields=["collected_until"])  # a collection ended: drawn again
    read = _charts(fs, "3h", start, now, 60)[0]["ops"]["series"][0]["values"]
    assert read.count(10.0) == 59 and read.count(20.0) == 1
    cache.clear()

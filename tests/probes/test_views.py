"""The probes section of the region page, the target page and the preset list."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.lib.status import Status
from apps.probes.models import Result, Target
from apps.probes.presets import PRESETS
from apps.regions.models import Region

pytestmark = pytest.mark.django_db


@pytest.fixture
def probe(site: Region) -> Target:
    return Target.objects.create(
        region=site,
        name="Front end",
        url="https://127.0.0.1:8443/",
        expected_min_s=60,
        expected_max_s=75,
        status=Status.WARNING.value,
        reason="closes idle connections after 3.0 s, expected 60-75 s",
    )


def result(target: Target, minutes_ago: int, **fields) -> Result:
    started = timezone.now() - timedelta(minutes=minutes_ago)
    fields.setdefault("cap_s", 1200.0)
    fields.setdefault("status", "ok")
    return Result.objects.create(target=target, started_at=started, created=started, **fields)


def chart(response, element_id: str) -> dict:
    html = response.content.decode()
    start = html.index(f'id="{element_id}"')
    body = html[html.index(">", start) + 1 : html.index("</script>", start)]
    return json.loads(body)


def test_it_lists_targets_with_status_last_idle_timeout_and_expected_range_on_the_region_page(
    logged_in_client, probe, site
):
    result(probe, 5, idle_timeout_s=3.02, closed_by="server", status="warning")

    response = logged_in_client.get(reverse("regions:detail", args=[site.pk]))

    html = response.content.decode()
    assert "Keep-alive" in html
    assert "Front end" in html
    assert "3.0 s" in html
    assert "60-75 s" in html
    assert "closes idle connections after 3.0 s, expected 60-75 s" in html
    assert 'hx-trigger="every 30s"' in html


def test_the_region_panel_finds_a_last_result_older_than_its_recent_days(probe, site):
    """The panel looks in the recent days' partitions first; a target not probed since still
    shows its last result, and one never probed none."""
    from apps.probes.views import RECENT_DAYS, region_panel_context

    result(probe, (RECENT_DAYS + 3) * 24 * 60, idle_timeout_s=61.0, closed_by="server")
    result(probe, (RECENT_DAYS + 4) * 24 * 60, idle_timeout_s=5.0, closed_by="server")
    never = Target.objects.create(region=site, name="Never", url="https://127.0.0.1:8444/")
    recent = Target.objects.create(region=site, name="Recent", url="https://127.0.0.1:8445/")
    result(recent, 5, idle_timeout_s=62.0, closed_by="server")
    result(recent, (RECENT_DAYS + 3) * 24 * 60, idle_timeout_s=7.0, closed_by="server")
    shown = {t.pk: t for t in region_panel_context(site, None)["targets"]}
    assert shown[probe.pk].last_idle_s == 61.0
    assert shown[recent.pk].last_idle_s == 62.0
    assert shown[never.pk].last_probed is None


def test_it_serves_the_region_panel_alone_for_polling(logged_in_client, probe, site):
    result(probe, 5, closed_by="cap", cap_s=1200.0)

    response = logged_in_client.get(reverse("regions:panel", args=[site.pk, "probes"]))

    assert response.status_code == 200
    assert "over 1200 s (cap)" in response.content.decode()
    assert "<html" not in response.content.decode()


def test_it_charts_the_idle_timeout_and_phases_with_gaps_for_failed_runs(logged_in_client, probe):
    result(
        probe,
        20,
        idle_timeout_s=3.0,
        closed_by="server",
        dns_s=0.001,
        connect_s=0.002,
        tls_s=0.01,
        first_byte_s=0.003,
        total_s=0.02,
    )
    result(
        probe,
        10,
        error="unreachable: 127.0.0.1:8443: Connection refused",
        status="critical",
        dns_s=0.001,
    )
    result(probe, 5, closed_by="cap", cap_s=1200.0, dns_s=0.001, connect_s=0.002)

    response = logged_in_client.get(reverse("probes:target_detail", args=[probe.pk]))

    assert response.status_code == 200
    idle = chart(response, "idle-chart")
    assert len(idle["x"]) == 3 and idle["x"] == sorted(idle["x"])
    series = {s["label"]: s["values"] for s in idle["series"]}
    assert series["Idle timeout"] == [3.0, None, None]
    assert series["Still open at the cap"] == [None, None, 1200.0]
    assert series["Expected from"] == [60, 60, 60]
    phases = {s["label"]: s["values"] for s in chart(response, "phases-chart")["series"]}
    assert phases["DNS"] == [1.0, 1.0, 1.0]
    assert phases["TLS"] == [10.0, None, None]
    assert phases["First byte"] == [3.0, None, None]
    assert "Connection refused" in response.content.decode()


def test_it_shows_a_target_that_was_never_probed(logged_in_client, probe):
    response = logged_in_client.get(reverse("probes:target_detail", args=[probe.pk]))

    assert "No measurement yet." in response.content.decode()


def test_it_answers_htmx_with_the_summary_only(logged_in_client, probe):
    response = logged_in_client.get(
        reverse("probes:target_detail", args=[probe.pk]), headers={"HX-Request": "true"}
    )

    html = response.content.decode()
    assert 'id="live"' in html
    assert "<html" not in html


def test_the_30_second_poll_reads_no_results_and_builds_no_chart(logged_in_client, probe):
    """The live part shows the target alone: its results and charts are the whole page's."""
    for minutes_ago in range(3):
        result(probe, minutes_ago, idle_timeout_s=3.0)
    url = reverse("probes:target_detail", args=[probe.pk])
    with CaptureQueriesContext(connection) as whole:
        logged_in_client.get(url)
    with CaptureQueriesContext(connection) as live:
        html = logged_in_client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert any("probes_result" in q["sql"] for q in whole.captured_queries)
    assert not any("probes_result" in q["sql"] for q in live.captured_queries)
    assert "idle-chart" not in html and "<script" not in html


def test_it_enables_a_target_and_makes_it_due_now(logged_in_client, probe):
    Target.objects.filter(pk=probe.pk).update(
        enabled=False, next_due=timezone.now() + timedelta(days=1)
    )

    response = logged_in_client.post(
        reverse("probes:target_enable", args=[probe.pk]), {"enabled": "1"}
    )

    assert response.status_code == 302
    probe.refresh_from_db()
    assert probe.enabled
    assert probe.next_due <= timezone.now()


def test_it_lists_the_seed_sites_with_what_the_seed_measured(logged_in_client, site):
    response = logged_in_client.get(reverse("probes:presets"))

    html = response.content.decode()
    for host in (
        "slashdot.org",
        "lwn.net",
        "yahoo.com",
        "nginx.org",
        "wikipedia.org",
        "google.com",
        "twitter.com",
    ):
        assert host in html
    assert "15 min" in html and "4 min" in html
    assert "disabled" in html


def test_it_adds_a_preset_in_one_click_disabled_and_never_due(logged_in_client, site):
    twitter = next(p for p in PRESETS if p.key == "twitter")

    response = logged_in_client.post(
        reverse("probes:presets"), {"preset": "twitter", "region": site.pk}
    )

    added = Target.objects.get(url=twitter.url)
    assert response.status_code == 302
    assert response.url == reverse("probes:target_detail", args=[added.pk])
    assert not added.enabled
    assert (added.expected_min_s, added.expected_max_s) == (880, 920)
    assert Target.claim_due(timezone.now() + timedelta(days=1)) == []
    logged_in_client.post(reverse("probes:presets"), {"preset": "twitter", "region": site.pk})
    assert Target.objects.filter(url=twitter.url).count() == 1


def test_it_refuses_an_unknown_preset(logged_in_client, site):
    response = logged_in_client.post(
        reverse("probes:presets"), {"preset": "example", "region": site.pk}
    )

    assert response.status_code == 302
    assert not Target.objects.exists()


def test_it_counts_only_enabled_targets_on_the_home_page(logged_in_client, probe, site):
    Target.objects.create(region=site, url="https://twitter.com/", enabled=False)

    from apps.regions import concerns

    counts = concerns.status_counts([site.pk])[site.pk]["probes"]
    assert dict(counts) == {"warning": 1}
    assert "Keep-alive" in logged_in_client.get(reverse("regions:home")).content.decode()


@pytest.mark.slow
def test_it_reads_the_probe_page_in_a_constant_number_of_queries(logged_in_client):
    from tests.demo.pages import BIGGER, SMALL, queries

    assert queries(logged_in_client, "probe", **SMALL) == queries(
        logged_in_client, "probe", **BIGGER
    )


def test_the_target_page_offers_one_edit_and_disabling_is_not_the_primary_button(
    client, operator, site
):
    target = Target.objects.create(region=site, url="https://shop.example.com/")
    client.force_login(operator)
    page = client.get(f"/probes/targets/{target.pk}/").content.decode()
    assert page.count(">Edit the target</a>") == 1 and "/admin/probes/target/" not in page
    assert '<button type="submit" class="secondary">Disable probing</button>' in page

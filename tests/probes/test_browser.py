"""The demo site's probes in Debian's chromium: region panel, and the target page's charts."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from apps import alerts
from apps.probes.demo import BEHAVIOURS, DEMO_SITE_CODE, set_up
from apps.probes.keepalive import Measurement
from apps.probes.models import Result, Target
from apps.regions.models import Region
from tests.helpers import log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo_history() -> tuple[int, int]:
    """The demo site with a day of results per target, one failed run among them."""
    set_up(base_port=9200)
    now = timezone.now()
    for target, behaviour in zip(Target.objects.order_by("pk"), BEHAVIOURS, strict=True):
        for hour in range(24, 0, -1):
            started = now - timedelta(hours=hour)
            idle = behaviour.keepalive_now(started.timestamp())
            failed = hour == 6
            Result.objects.create(
                target=target,
                started_at=started,
                created=started,
                cap_s=target.cap_s,
                status_code=None if failed else 200,
                idle_timeout_s=None if failed else idle + 0.004 * (hour % 5),
                closed_by="" if failed else "server",
                dns_s=0.0002,
                connect_s=None if failed else 0.0004 + 0.0001 * (hour % 3),
                first_byte_s=None if failed else 0.0011 + 0.0002 * (hour % 4),
                total_s=None if failed else 0.002,
                error="unreachable: 127.0.0.1: Connection refused" if failed else "",
                status="critical" if failed else "ok",
            )
        last = target.results.order_by("-created").first()
        measured = Measurement(
            url=target.url,
            started_at=last.started_at,
            status_code=200,
            idle_timeout_s=last.idle_timeout_s,
            closed_by="server",
        )
        alerts.record(target, target.judge(measured))
    site = Region.objects.get(code=DEMO_SITE_CODE)
    return site.pk, Target.objects.order_by("pk").values_list("pk", flat=True)[1]


def test_it_shows_the_probes_panel_and_draws_the_target_charts(
    live_server,
    admin,
    demo_history,  # before the browser: no ORM inside Playwright's context
    browser_page,
):
    site_pk, target_pk = demo_history
    page = browser_page
    log_in(page, live_server.url)

    page.goto(f"{live_server.url}/regions/{site_pk}/", wait_until="networkidle")
    panel = page.locator("table.probes-targets")
    assert panel.locator("tbody tr").count() == len(BEHAVIOURS)
    assert "60-75 s" in panel.inner_text()
    screenshot(page, "probes-region.png")

    page.goto(f"{live_server.url}/probes/targets/{target_pk}/")
    page.wait_for_selector(".timeseries .uplot canvas")
    assert page.locator(".timeseries .uplot").count() == 2
    screenshot(page, "probes-target.png")

    page.goto(f"{live_server.url}/probes/presets/", wait_until="networkidle")
    assert page.locator("table tbody tr").count() == 7
    screenshot(page, "probes-presets.png")


@pytest.fixture
def new_target(admin, site) -> int:
    """A target just added: one measurement, as a new user sees its page first."""
    target = Target.objects.create(region=site, name="new", url="http://127.0.0.1:9/")
    started = timezone.now() - timedelta(minutes=2)
    Result.objects.create(
        target=target,
        started_at=started,
        created=started,
        cap_s=target.cap_s,
        status_code=200,
        idle_timeout_s=5.0,
        closed_by="server",
        dns_s=0.0002,
        connect_s=0.0004,
        first_byte_s=0.0011,
        total_s=0.002,
        status="ok",
    )
    return target.pk


def test_a_new_target_s_chart_spans_an_hour_in_24_hour_iso_times(
    live_server, new_target, browser_page
):
    page = browser_page
    log_in(page, live_server.url, then=f"/probes/targets/{new_target}/")
    page.wait_for_selector(".timeseries .uplot canvas")
    axis = page.evaluate(
        """() => { const u = document.querySelector('.timeseries')._uplot;
                   return {span: u.scales.x.max - u.scales.x.min, ticks: u.axes[0]._values}; }"""
    )
    assert axis["span"] == 3600  # not "Jan 2027 … Jul 2029" around one point
    assert axis["ticks"] and all("am" not in t and "pm" not in t for t in axis["ticks"])
    assert any(":" in t for t in axis["ticks"])  # 24-hour HH:mm
    box = page.locator(".timeseries .uplot .u-over").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    legend_time = page.locator(".timeseries .u-legend .u-series").first.inner_text()
    assert re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", legend_time), legend_time
    screenshot(page, "probes-new-target.png")

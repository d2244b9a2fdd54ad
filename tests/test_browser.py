"""A person's first visit, in Debian's chromium driven by Playwright: log in, see the regions."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers import demo_account_on_standin, log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo_fleet(settings) -> Iterator[None]:
    """Demo mode against the embedded AWS stand-in, with the demo account's regions found."""
    settings.VIGIL_DEMO = "true"
    with demo_account_on_standin(settings):
        yield


# The ORM is used only in fixtures set up before the browser: inside Playwright's sync API the
# code runs in another context, where a database connection would outlive the test.
def test_it_logs_in_and_shows_the_demo_regions(live_server, admin, demo_fleet, browser_page):
    page = browser_page
    page.goto(live_server.url + "/")
    assert "/accounts/login/" in page.url

    log_in(page, live_server.url)
    page.wait_for_selector("#tiles .tile")

    assert page.locator(".demo-banner").inner_text().startswith("Demo account")
    titles = page.locator(".tile h2").all_inner_texts()
    assert "Asia Pacific (Hong Kong)" in titles and "Middle East (Bahrain)" in titles
    assert "Africa (Cape Town)" not in titles  # not opted in
    assert page.locator(".tile", has_text="ap-east-1").locator(".tag").inner_text() == (
        "opt-in region"
    )

    screenshot(page, "browser/home.png")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "browser/home-phone.png")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # no sideways scroll


@pytest.fixture
def incident(admin):
    from apps import alerts
    from apps.lib.status import Status, Verdict
    from apps.regions.models import Region
    from tests.concern_app.models import Gadget

    region = Region.objects.create(kind=Region.Kind.SITE, code="dc-berlin", name="Berlin DC")
    gadget = Gadget.objects.create(region=region, name="array-7")
    alerts.record(gadget, Verdict(Status.CRITICAL, "md3 degraded: 1 of 3 disks failed"))
    return gadget


def test_it_acknowledges_an_incident_from_the_alerts_page(live_server, incident, browser_page):
    page = browser_page
    log_in(page, live_server.url, then="/alerts/")
    row = page.locator("#incidents tr", has_text="gadget array-7")
    assert "md3 degraded" in row.inner_text() and "open" in row.inner_text()
    row.get_by_role("button", name="Acknowledge").click()
    row = page.locator("#incidents tr", has_text="gadget array-7")
    assert "acknowledged by admin" in row.inner_text()

    screenshot(page, "browser/alerts.png")

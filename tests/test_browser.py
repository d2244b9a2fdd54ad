"""A person's first visit, in Debian's chromium driven by Playwright: log in, see the regions."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from apps.demo import mode
from apps.demo.standin import AwsStandIn
from apps.lib import aws
from apps.regions import tasks
from apps.regions.models import Account
from tests.conftest import OUTPUT_DIR

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo_fleet(settings) -> Iterator[None]:
    """Demo mode against the embedded AWS stand-in, with the demo account's regions found."""
    with AwsStandIn() as url:
        settings.AWS_ENDPOINT_URL = url
        settings.VIGIL_DEMO = "true"
        aws.clear_cache()
        mode.ensure_demo_account(True)
        tasks.discover_regions(Account.objects.get(is_demo=True).pk)
        yield
    aws.clear_cache()


# The ORM is used only in fixtures set up before the browser: inside Playwright's sync API the
# code runs in another context, where a database connection would outlive the test.
def test_it_logs_in_and_shows_the_demo_regions(live_server, admin, demo_fleet, browser_page):
    page = browser_page
    page.goto(live_server.url + "/")
    assert "/accounts/login/" in page.url

    page.fill("#id_username", "admin")
    page.fill("#id_password", "s3cret-pass-word")
    page.click("button[type=submit]")
    page.wait_for_selector("#tiles .tile")

    assert page.locator(".demo-banner").inner_text().startswith("Demo account")
    titles = page.locator(".tile h2").all_inner_texts()
    assert "Asia Pacific (Hong Kong)" in titles and "Middle East (Bahrain)" in titles
    assert "Africa (Cape Town)" not in titles  # not opted in
    assert page.locator(".tile", has_text="ap-east-1").locator(".tag").inner_text() == (
        "opt-in region"
    )

    out = OUTPUT_DIR / "browser"
    out.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=out / "home.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=out / "home-phone.png", full_page=True)
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
    page.goto(live_server.url + "/accounts/login/?next=/alerts/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "s3cret-pass-word")
    page.click("button[type=submit]")
    row = page.locator("#incidents tr", has_text="gadget array-7")
    assert "md3 degraded" in row.inner_text() and "open" in row.inner_text()
    row.get_by_role("button", name="Acknowledge").click()
    row = page.locator("#incidents tr", has_text="gadget array-7")
    assert "acknowledged by admin" in row.inner_text()

    out = OUTPUT_DIR / "browser"
    out.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=out / "alerts.png", full_page=True)

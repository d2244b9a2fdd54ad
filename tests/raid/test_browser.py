"""The demo storage client in chromium: region panel, host page tree, a mobile width."""

from __future__ import annotations

import pytest

from apps.raid import demo
from tests.helpers import log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo_host():
    host = demo.set_up()
    return host.name, host.region_id


# No ORM below this line: the browser runs Playwright's event loop in this thread.
def test_the_demo_storage_client_reads_as_a_tree(live_server, admin, demo_host, browser_page):
    name, region_id = demo_host
    page = browser_page
    log_in(page, live_server.url)

    page.goto(f"{live_server.url}/regions/{region_id}/")
    panel = page.locator(f"#raid-panel-{region_id}")
    assert "demo-storage-client" in panel.inner_text()
    assert "any 1 of the 3 storage servers" in panel.inner_text()
    screenshot(page, "raid-region.png")

    panel.get_by_role("link", name=name).click()  # the timeline above names it too
    page.wait_for_selector(".raid-roots")
    md2 = page.locator(".raid-array", has=page.locator("h3 code", has_text="md2"))
    assert md2.locator("progress").count() == 1
    assert "Recovery" in md2.inner_text() and "MiB/s" in md2.inner_text()
    nested = page.locator(".raid-roots > .raid-node > .raid-tree > .raid-node")
    assert nested.count() == 5  # md1..md5 under md99
    screenshot(page, "raid-host.png")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "raid-host-mobile.png")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390 + 1


def test_the_demo_names_its_failing_disk_and_how_to_replace_it(
    live_server, admin, demo_host, browser_page
):
    """docs/raid.md's docs/raid-disks.png is a copy of test-output/readme/raid-disks.png."""
    from tests.helpers import OUTPUT_DIR

    name, region_id = demo_host
    page = browser_page
    page.set_viewport_size({"width": 1100, "height": 900})
    log_in(page, live_server.url)
    page.goto(f"{live_server.url}/regions/{region_id}/")
    page.locator(f"#raid-panel-{region_id}").get_by_role("link", name=name).click()
    md3 = page.locator(".raid-array", has=page.locator("h3 code", has_text="md3"))
    advice = md3.locator(".raid-advice")
    assert "Replace sdd (serial ZBS04114) on storage server storage-a" in advice.inner_text()
    assert "mdadm --manage /dev/md3 --remove" in advice.inner_text()
    assert "sdd (serial ZBS04114) is failing SMART: pending sectors 24" in md3.inner_text()
    readme = OUTPUT_DIR / "readme"
    readme.mkdir(parents=True, exist_ok=True)
    md3.screenshot(path=readme / "raid-disks.png")

"""The channel form says what is wrong while it is typed, in Debian's chromium (Playwright)."""

from __future__ import annotations

import pytest

from apps.alerts.models import Channel
from tests.helpers import log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_channel_form_explains_a_wrong_url_as_it_is_typed(live_server, admin, browser_page):
    page = browser_page
    log_in(page, live_server.url, then="/alerts/channels/")
    page.select_option("#id_kind", "webhook")
    page.fill("#id_name", "Ops hook")
    page.locator("#id_target").press_sequentially("ftp://hooks.example.com/", delay=20)
    errors = page.locator("#id_target-live-errors")
    errors.get_by_text("must start with https://").wait_for(timeout=10_000)
    assert page.evaluate("document.activeElement.id") == "id_target"  # still typing there
    assert page.locator("#id_secret-live-errors").inner_text() == ""  # not reached yet

    page.locator("#id_target").fill("http://169.254.169.254/hook")
    page.locator("#id_target").dispatch_event("change")
    errors.get_by_text("the instance metadata service").wait_for(timeout=10_000)
    assert not Channel.objects.filter(name="Ops hook").exists()  # checking saves nothing

    screenshot(page, "browser/alerts-channel-form.png")


@pytest.fixture
def storage_b_gone(db):
    """The demo's storage client (RAID-0 over five RAID-10s on three storage servers) with
    storage-b gone: one incident by cause, the other arrays held back on it."""
    from apps.alerts.models import Cause, Rule
    from apps.raid import demo
    from apps.raid.collect import ingest
    from apps.raid.demo import SEED_ARRAYS, seed_layout_mdstat

    channel = Channel.objects.create(name="On call", target="oncall@example.com")
    rule, _ = Rule.objects.get_or_create(is_default=True, defaults={"name": "Default"})
    rule.channels.add(channel)
    host = demo.set_up()
    ingest(host, seed_layout_mdstat())
    ingest(host, seed_layout_mdstat(failed=[disks[1] for disks in SEED_ARRAYS.values()]))
    return Cause.objects.get(closed=None).pk


# No ORM below this line: the browser runs Playwright's event loop in this thread.
def test_an_incident_by_cause_names_the_server_and_lists_its_arrays(
    live_server, admin, storage_b_gone, browser_page
):
    """docs/alerts.md's docs/alerts-cause.png is a copy of test-output/readme/alerts-cause.png."""
    from tests.helpers import OUTPUT_DIR

    page = browser_page
    page.set_viewport_size({"width": 1100, "height": 800})
    log_in(page, live_server.url, then=f"/alerts/causes/{storage_b_gone}/")
    text = page.inner_text("main")
    assert "storage server storage-b" in text
    for n in (1, 2, 3, 4, 5, 99):
        assert f"md{n}" in text
    assert "inhibited" in text.lower()
    readme = OUTPUT_DIR / "readme"
    readme.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=readme / "alerts-cause.png", full_page=True)

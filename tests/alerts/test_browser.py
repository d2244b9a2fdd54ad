"""The channel form says what is wrong while it is typed, in Debian's chromium (Playwright)."""

from __future__ import annotations

import pytest

from apps.alerts.models import Channel
from tests.conftest import log_in, screenshot

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

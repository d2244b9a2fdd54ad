"""The demo fleet in Debian's chromium: the sortable region table and the charts."""

from __future__ import annotations

import pytest

from tests.conftest import OUTPUT_DIR

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_it_sorts_the_region_table_and_draws_the_file_system_charts(
    live_server,
    admin,
    collected_demo,
    browser_page,  # last: no ORM once the browser runs, see tests/test_browser.py
):
    region_pk, fs_pk = collected_demo
    page = browser_page
    page.goto(live_server.url + "/accounts/login/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "s3cret-pass-word")
    page.click("button[type=submit]")

    page.goto(f"{live_server.url}/regions/{region_pk}/", wait_until="networkidle")
    table = page.locator("table.efs-table")
    assert table.locator("tbody tr").count() == 2
    page.click("table.efs-table th:has-text('I/O limit')")
    page.click("table.efs-table th:has-text('I/O limit')")  # descending: the busiest first
    assert "demo-sessions-small-io" in table.locator("tbody tr").first.inner_text()
    OUTPUT_DIR.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT_DIR / "efs-region.png"), full_page=True)

    page.goto(f"{live_server.url}/efs/filesystems/{fs_pk}/?range=3h")
    page.wait_for_selector(".timeseries .uplot canvas")
    # ops, throughput, request sizes, PercentIOLimit, clients, credits
    assert page.locator(".timeseries .uplot").count() == 6
    page.screenshot(path=str(OUTPUT_DIR / "efs-filesystem.png"), full_page=True)

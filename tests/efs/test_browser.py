"""The demo fleet in Debian's chromium: the sortable region table and the charts."""

from __future__ import annotations

import pytest

from tests.conftest import log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_it_sorts_the_region_table_and_draws_the_file_system_charts(live_server, demo_in_chromium):
    page, region_pk, fs_pk = demo_in_chromium
    log_in(page, live_server.url)

    page.goto(f"{live_server.url}/regions/{region_pk}/", wait_until="networkidle")
    table = page.locator("table.efs-table")
    assert table.locator("tbody tr").count() == 2
    page.click("table.efs-table th:has-text('I/O limit')")
    page.click("table.efs-table th:has-text('I/O limit')")  # descending: the busiest first
    assert "demo-sessions-small-io" in table.locator("tbody tr").first.inner_text()
    screenshot(page, "efs-region.png")

    page.goto(f"{live_server.url}/efs/filesystems/{fs_pk}/?range=3h")
    page.wait_for_selector(".timeseries .uplot canvas")
    # ops, throughput, request sizes, PercentIOLimit, clients, credits
    assert page.locator(".timeseries .uplot").count() == 6
    screenshot(page, "efs-filesystem.png")

"""The demo fleet in Debian's chromium: the sortable region table and the charts."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.helpers import OUTPUT_DIR, log_in, screenshot

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


@pytest.fixture
def demo_clients_pushed(collected_demo) -> int:
    """The demo's NFS clients pushed twice, ten minutes apart, for the first two demo file
    systems (before the browser starts: no ORM once it runs): the pk of the first one."""
    from django.utils import timezone

    from apps.efs import demo_clients
    from apps.efs.models import FileSystem

    now = timezone.now()
    assert demo_clients.push_all(now - timedelta(minutes=10)) == 3
    assert demo_clients.push_all(now) == 3
    return (
        FileSystem.objects.filter(region__account__is_demo=True, deleted__isnull=True)
        .order_by("pk")
        .first()
        .pk
    )


def test_the_file_system_page_says_which_client_and_warns_of_the_lock_trap(
    live_server, demo_clients_pushed, demo_in_chromium
):
    """docs/efs.md's docs/efs-clients.png is a copy of test-output/readme/efs-clients.png."""
    page, _, _ = demo_in_chromium
    page.set_viewport_size({"width": 1100, "height": 900})
    log_in(page, live_server.url)
    page.goto(f"{live_server.url}/efs/filesystems/{demo_clients_pushed}/?range=3h")
    section = page.locator("section[aria-labelledby=nfs-h]")
    rows = section.locator("table.nfs-clients tbody tr")
    assert rows.first.locator("td, th").first.inner_text().strip() == "app-1"
    text = section.inner_text()
    assert "takes 5.0 s (reverse) from 1 client (batch-7)" in text
    assert "(forward)" not in text  # its forward lookups are fast: not a warning
    # They began pushing ten minutes ago: CloudWatch's sums are taken from then too.
    assert "the clients' first count in this range: CloudWatch's sums from then too" in text
    readme = OUTPUT_DIR / "readme"
    readme.mkdir(parents=True, exist_ok=True)
    section.screenshot(path=readme / "efs-clients.png")

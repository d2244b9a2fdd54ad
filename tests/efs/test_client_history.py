"""Which client: two clients' pushes against a stand-in file system's CloudWatch totals (the
minutes CloudWatch would have sent for the same operations): shares that add up, bytes equal
to DataRead/WriteIOBytes, the metered bytes within the clients' range; the page shows it, with
a stale client named, a slow reverse lookup warned and mount options against AWS's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.urls import reverse

from apps.efs import client_history
from apps.efs.client_push import read_push, store
from apps.efs.models import FileSystem, MetricMinute
from tests.efs.builders import mountstats

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
SERVER = "fs-0123abcd.efs.us-east-1.amazonaws.com"
KIB = 1024


@pytest.fixture
def fs(site):
    return FileSystem.objects.create(region=site, filesystem_id="fs-0123abcd", name="shared")


def push(host, at, lookups=None, **counters):
    hostname, instance_id, mounts, _, locks = read_push(
        {"hostname": host, "mountstats": mountstats(SERVER, **counters)}
    )
    return store(hostname, instance_id, mounts, lookups or [], locks, at)


def two_clients():
    """web-1 reads 10 x 64 KiB and writes 2 x 1 MiB in the minute; batch-1 reads 300 x 1 MiB.
    CloudWatch's minute holds the same operations: bytes, counts and metered bytes."""
    push("web-1", T0)
    push("batch-1", T0)
    push(
        "web-1",
        T0 + timedelta(minutes=1),
        read_bytes=640 * KIB,
        reads=10,
        write_bytes=2 * 1024 * KIB,
        writes=2,
    )
    push("batch-1", T0 + timedelta(minutes=1), read_bytes=300 * 1024 * KIB, reads=300)
    read_bytes = 640 * KIB + 300 * 1024 * KIB
    write_bytes = 2 * 1024 * KIB
    # metering: every operation is over 32 KiB, so metered = bytes, reads at one-third; the
    # sample's own metadata operations (unchanged between pushes) add nothing
    MetricMinute.objects.create(
        filesystem=FileSystem.objects.get(),
        ts=T0,
        data_read_bytes=read_bytes,
        data_read_count=310,
        data_write_bytes=write_bytes,
        data_write_count=2,
        metered_bytes=read_bytes / 3 + write_bytes,
    )


def test_two_clients_shares_add_up_to_cloudwatchs_totals_within_the_metering_rules(fs):
    two_clients()
    now = T0 + timedelta(minutes=2)
    shares = client_history.client_shares(fs, T0 - timedelta(minutes=1), now, now)
    top, other = shares["rows"]
    assert top.name == "batch-1"  # the top talker first
    assert sum(r.share["read_bytes"] for r in shares["rows"]) == pytest.approx(1)
    assert top.share["read_bytes"] == pytest.approx(300 * 1024 / (300 * 1024 + 640))
    assert other.share["write_bytes"] == 1
    cw = shares["cloudwatch"]
    assert shares["totals"]["read_bytes"] == cw["data_read_bytes"]
    assert shares["totals"]["write_bytes"] == cw["data_write_bytes"]
    assert shares["totals"]["read_ops"] == cw["data_read_count"]
    assert shares["metered_low"] <= cw["metered_bytes"] <= shares["metered_high"]
    assert top.per_op["read"]["ops"] == 300 and not top.stale
    ops = {o["op"]: o for o in top.operations}  # by name, since mounted
    assert ops["READ"]["ops"] == 300 and "GETATTR" in ops and "SEQUENCE" not in ops


def test_the_page_answers_which_client_and_warns_of_the_lock_trap(fs, logged_in_client, settings):
    two_clients()
    slow = [
        {
            "server": SERVER,
            "address": "10.1.2.3",
            "reverse_seconds": 5.0,
            "reverse_name": "",
            "forward_seconds": 0.01,
            "forward_ok": True,
        }
    ]
    push(
        "web-1",
        T0 + timedelta(minutes=3),
        lookups=slow,
        read_bytes=640 * KIB,
        reads=10,
        write_bytes=2 * 1024 * KIB,
        writes=2,
    )
    with time_machine.travel(T0 + timedelta(minutes=7), tick=False):
        html = logged_in_client.get(
            reverse("efs:filesystem_detail", args=[fs.pk]) + "?range=3h"
        ).content.decode()
    html = " ".join(html.split())  # as a browser shows it: the template wraps its lines
    assert "Which client?" in html
    assert html.index("batch-1") < html.index("web-1")
    assert "Stopped reporting:</strong> batch-1" in html  # last push 6 minutes ago, over 5
    assert "5.0 s (reverse)" in html and "locking hangs" in html
    assert "rsize=131072" in html and "mount-helper-setting.html" in html
    assert "<summary>By operation</summary>" in html and '<th scope="row">GETATTR</th>' in html


def test_a_file_system_without_clients_says_how_to_get_them(fs, logged_in_client):
    html = logged_in_client.get(reverse("efs:filesystem_detail", args=[fs.pk])).content.decode()
    assert "No NFS client reports this file system" in html


def test_a_fleet_shows_its_top_talkers_and_sums_the_rest_with_findings_grouped(fs, settings):
    for i in range(25):
        push(f"web-{i:02d}", T0)
        push(f"web-{i:02d}", T0 + timedelta(minutes=1), read_bytes=(i + 1) * KIB, reads=1)
    now = T0 + timedelta(minutes=2)
    shares = client_history.client_shares(fs, T0, now, now)
    assert shares["clients"] == 25 and len(shares["rows"]) == client_history.TOP + 1
    assert shares["rows"][0].name == "web-24"
    others = shares["rows"][-1]
    assert others.clients == 5 and others.totals["read_bytes"] == sum(range(1, 6)) * KIB
    assert sum(r.share["read_bytes"] for r in shares["rows"]) == pytest.approx(1)
    rsize = next(g for g in shares["findings"] if g["finding"].option == "rsize")
    assert rsize["mounts"] == 25 and rsize["names"] == ["web-00"]  # one set of options, an example


def test_the_page_links_every_client_a_page_at_a_time(fs, logged_in_client, monkeypatch):
    from apps.efs import views

    monkeypatch.setattr(views, "CLIENTS_PAGE", 10)
    for i in range(25):
        push(f"web-{i:02d}", T0)
        push(f"web-{i:02d}", T0 + timedelta(minutes=1), read_bytes=(i + 1) * KIB, reads=1)
    with time_machine.travel(T0 + timedelta(minutes=2), tick=False):
        page = logged_in_client.get(reverse("efs:filesystem_detail", args=[fs.pk])).content
        url = reverse("efs:filesystem_clients", args=[fs.pk])
        last = logged_in_client.get(url, {"range": "3h", "page": 3}).content.decode()
    assert f'href="{url}?range=24h">All 25 clients</a>' in page.decode()
    assert "25 clients that counted anything, 21-25 here" in last
    assert last.index("web-04") < last.index("web-00") and "web-05" not in last
    assert "Page 3 of 3" in last and 'rel="prev"' in last and 'rel="next"' not in last


def test_the_api_answers_which_client_over_a_range(fs, api_client, api_key):
    two_clients()
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key()}")  # read-only
    url = f"/api/efs/filesystems/{fs.pk}/clients/"
    with time_machine.travel(T0 + timedelta(minutes=2), tick=False):
        body = api_client.get(url, {"start": (T0 - timedelta(minutes=1)).isoformat()}).json()
    assert [r["name"] for r in body["rows"]] == ["batch-1", "web-1"]
    assert body["rows"][0]["operations"][0]["op"] == "READ"
    assert body["totals"]["read_bytes"] == body["cloudwatch"]["data_read_bytes"]
    low, high = body["metered_bytes_range"]
    assert low <= body["cloudwatch"]["metered_bytes"] <= high
    assert {f["option"] for f in body["option_findings"]} == {"rsize", "wsize", "noresvport"}
    bad = api_client.get(url, {"start": "2026-13-01T00:00:00Z"})
    assert bad.status_code == 400


def test_the_region_panel_counts_each_file_systems_clients(fs, logged_in_client):
    push("web-1", T0)
    push("old-1", T0 - timedelta(hours=1))
    with time_machine.travel(T0 + timedelta(minutes=1), tick=False):
        html = logged_in_client.get(reverse("regions:detail", args=[fs.region.pk])).content.decode()
    assert "NFS clients</th>" in html and "(1 stopped)" in html


def test_the_page_works_out_which_client_once_per_cache_period(fs, logged_in_client, settings):
    settings.VIGIL_PAGE_CACHE_SECONDS = 30
    from django.core.cache import cache

    cache.clear()
    two_clients()
    url = reverse("efs:filesystem_detail", args=[fs.pk]) + "?range=3h"
    with time_machine.travel(T0 + timedelta(minutes=2), tick=False):
        first = logged_in_client.get(url).content.decode()
        push("late-1", T0 + timedelta(minutes=2))
        again = logged_in_client.get(url).content.decode()
    assert "batch-1" in first and "late-1" not in again  # the same work, shared
    cache.clear()


def test_a_client_that_mounts_but_counted_nothing_in_the_range_shows_with_zeros(fs):
    push("web-1", T0)
    push("web-1", T0 + timedelta(minutes=1), read_bytes=64 * KIB, reads=1)
    push("idle-1", T0 + timedelta(minutes=1))  # its first push: nothing counted yet
    now = T0 + timedelta(minutes=2)
    shares = client_history.client_shares(fs, T0, now, now)
    assert [r.name for r in shares["rows"]] == ["web-1", "idle-1"]
    assert shares["clients"] == 2 and shares["rows"][1].totals["read_bytes"] == 0
    assert shares["rows"][1].last_push == T0 + timedelta(minutes=1)
    assert shares["stale"] == [] and shares["rows"][0].last_push == T0 + timedelta(minutes=1)


def test_the_running_totals_count_what_the_hours_sum_for_a_range_to_now(fs):
    """The page reads each client's running totals less the opening ones of its first hour in
    the range; an API range that ends earlier sums the hours: both give the same sums, for a
    client pushing through the range, one that paused over its start, one that started after
    it and one that stopped before it; and the totals rebuilt from the hours are the pushes'."""
    from apps.efs.client_push import rebuild_totals
    from apps.efs.models import NfsHour, NfsTotal

    def pushes(host, minutes):
        for n, minute in enumerate(minutes):
            push(host, T0 + timedelta(minutes=minute), read_bytes=n * n * KIB, reads=n * 3,
                 write_bytes=n * KIB, writes=n)  # fmt: skip

    pushes("steady-1", range(-240, 60, 20))
    pushes("paused-1", [*range(-240, -150, 30), *range(-50, 60, 25)])  # none in 7:00-8:00
    pushes("late-1", range(-30, 60, 15))
    pushes("gone-1", range(-300, -200, 10))
    now = T0 + timedelta(minutes=61)
    counted = {-5: 4, -2: 3, 0: 3, 1: 0}  # clients that counted since T0 + n hours
    for hours, clients in counted.items():
        start = T0 + timedelta(hours=hours)
        fast = client_history._top_clients(fs.pk, start, now, now, now)
        slow = client_history._top_clients(fs.pk, start, now, now + timedelta(hours=1), now)
        assert fast == slow and fast[2] == clients
    assert client_history._top_clients(fs.pk, T0, now, now, now)[1]["read_bytes"] > 0
    written = sorted(NfsHour.objects.values_list(*(f.attname for f in NfsHour._meta.fields[1:])))
    totals = sorted(NfsTotal.objects.values_list(*(f.attname for f in NfsTotal._meta.fields[1:])))
    rebuild_totals()
    assert written == sorted(
        NfsHour.objects.values_list(*(f.attname for f in NfsHour._meta.fields[1:]))
    )
    assert totals == sorted(
        NfsTotal.objects.values_list(*(f.attname for f in NfsTotal._meta.fields[1:]))
    )


def test_a_clients_operations_reach_the_page_escaped_with_their_figures(fs):
    from apps.efs.models import NfsMount

    two_clients()
    mount = NfsMount.objects.filter(filesystem=fs, client__hostname="batch-1").get()
    mount.ops = {"READ": [1234, 0, 0, 2468, 3702], "<b>ODD</b>": [2, 0, 0, 1, 1]}
    mount.save(update_fields=["ops"])
    now = T0 + timedelta(minutes=2)
    top = client_history.ranked_clients(fs, T0 - timedelta(minutes=1), now, now).rows[0]
    assert top.cells["operations"] == (
        '<tr><th scope="row">READ</th><td>1,234</td><td>2.0 / 3.0</td></tr>'
        '<tr><th scope="row">&lt;b&gt;ODD&lt;/b&gt;</th><td>2</td><td>0.5 / 0.5</td></tr>'
    )

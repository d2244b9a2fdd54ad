"""Disks stored from reports: the same row across renames, the history, the page, the API and
/metrics, with the demo's failing disk."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.raid import demo
from apps.raid.collect import ingest
from apps.raid.demo import seed_devlinks, seed_layout_mdstat, seed_smart, seed_sysfs
from apps.raid.models import Array, Disk, DiskReading
from tests.helpers import SHARED_FIXTURES
from tests.prometheus.test_views import samples

pytestmark = pytest.mark.django_db

DISKS = [f"sd{c}" for c in "bcdefghijklmnop"]
SMART = SHARED_FIXTURES / "smartctl"


def smart(**changes: str) -> dict[str, str]:
    return {disk: seed_smart(disk, failing="") for disk in DISKS} | changes


def test_a_renamed_disk_is_the_same_row_and_its_counters_are_kept_over_time(host):
    now = timezone.now()
    ingest(host, seed_layout_mdstat(), smart=smart(), now=now)
    sdd = Disk.objects.get(host=host, device="sdd")
    assert sdd.key == "wwn:0x5000c500a9dfac86" and sdd.status == "ok"
    assert DiskReading.objects.filter(disk=sdd).count() == 1

    # A reboot: sdd comes back as sdq, in the same slot of md3, now with 24 pending sectors.
    renamed = seed_layout_mdstat().replace("sdd[0]", "sdq[0]")
    moved = smart(sdq=seed_smart("sdd", failing="sdd")) | {"sdd": ""}
    ingest(host, renamed, smart=moved, now=now + timedelta(minutes=1))
    sdd.refresh_from_db()
    assert (sdd.device, sdd.members, sdd.pending_sectors, sdd.failing) == ("sdq", ["sdq"], 24, True)
    assert Disk.objects.filter(host=host).count() == 15
    readings = list(sdd.readings.order_by("read_at").values_list("pending_sectors", flat=True))
    assert readings == [0, 24]  # a change is kept at once

    ingest(host, renamed, smart=moved, now=now + timedelta(minutes=2))  # no change: not kept
    ingest(host, renamed, smart=moved, now=now + timedelta(minutes=62))  # an hour later: kept
    assert sdd.readings.count() == 3
    member = Array.objects.get(host=host, name="md3").members.get(device="sdq")
    assert member.disk_id == sdd.pk


def test_a_disk_no_longer_under_an_array_is_kept_but_not_present(host):
    ingest(host, seed_layout_mdstat(), smart=smart())
    ingest(host, "Personalities : \nunused devices: <none>\n", smart={})
    assert Disk.objects.filter(host=host, present=True).count() == 0
    assert Disk.objects.filter(host=host).count() == 15


@pytest.fixture
def demo_host(settings):
    return demo.set_up()


def test_the_demo_page_names_the_failing_disk_its_server_and_the_commands(
    logged_in_client, demo_host
):
    page = logged_in_client.get(f"/raid/hosts/{demo_host.pk}/").content.decode()
    assert "Replace <code>sdd</code> (serial <code>ZBS04114</code>) on" in page
    assert "storage server <strong>storage-a</strong>" in page
    assert "md99 → md3 → sdd" in page
    assert "mdadm --manage /dev/md3 --fail /dev/disk/by-id/wwn-0x5000c500a9dfac86" in page
    assert "mdadm --manage /dev/md3 --add /dev/sdd" in page
    assert "iqn.2026-01.example.storage-a:disks LUN 2 at 192.0.2.11:3260" in page
    md3 = Array.objects.get(host=demo_host, name="md3")
    assert "sdd (serial ZBS04114) is failing SMART: pending sectors 24" in md3.headroom_text
    assert md3.status == "warning"
    assert "Disk history" in page
    assert "last check ended before" in md3.scrub_text


def test_the_live_part_has_the_disks_but_not_their_history(logged_in_client, demo_host):
    live = logged_in_client.get(f"/raid/hosts/{demo_host.pk}/", HTTP_HX_REQUEST="true")
    text = live.content.decode()
    assert "Disks" in text and "ZBS04114" in text
    assert "Disk history" not in text


@pytest.mark.parametrize(
    "fixture",
    [path.name.removesuffix(".expected.json") for path in sorted(SMART.glob("*.expected.json"))],
)
def test_each_published_output_says_on_the_page_what_its_fixture_says(
    logged_in_client, host, fixture
):
    facts = json.loads((SMART / f"{fixture}.expected.json").read_text())
    ingest(host, seed_layout_mdstat(), smart=smart(sdd=(SMART / f"{fixture}.json").read_text()))
    page = logged_in_client.get(f"/raid/hosts/{host.pk}/").content.decode()
    row = page.split('<tr id="disk-')[3]  # sdb, sdc, then sdd
    for words in facts["page_says"]:
        assert words.replace("&", "&amp;") in row, words


def test_the_api_lists_disks_and_their_readings(api_client, api_key, host):
    ingest(host, seed_layout_mdstat(), smart=smart(sdd=seed_smart("sdd", failing="sdd")))
    headers = {"HTTP_AUTHORIZATION": f"Bearer {api_key()}"}
    disks = api_client.get("/api/raid/disks/?failing=true", **headers).json()["results"]
    assert [(d["device"], d["serial"], d["pending_sectors"]) for d in disks] == [
        ("sdd", "ZBS04114", 24)
    ]
    readings = api_client.get(f"/api/raid/disk-readings/?disk={disks[0]['id']}", **headers)
    assert readings.json()["results"][0]["pending_sectors"] == 24
    arrays = api_client.get(f"/api/raid/arrays/?host={host.pk}&name=md3", **headers).json()
    assert arrays["results"][0]["advice"][0]["path"] == "md99 → md3 → sdd"


def test_the_push_takes_smart_devlinks_sysfs_and_the_reading_time(api_client, host):
    token = host.issue_token()
    read_at = int(timezone.now().timestamp()) - 30
    body = {
        "mdstat": seed_layout_mdstat(),
        "sysfs": seed_sysfs(None),
        "smart": smart(),
        "devlinks": seed_devlinks(),
        "read_at": read_at,
    }
    response = api_client.post(
        f"/api/raid/hosts/{host.pk}/report",
        body,
        format="json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code == 200, response.content
    sdd = Disk.objects.get(host=host, device="sdd")
    assert int(sdd.last_read.timestamp()) == read_at
    assert sdd.iscsi_target == "iqn.2026-01.example.storage-a:disks" and sdd.iscsi_lun == 2
    for bad, says in [
        ({"smart": ["sdd"]}, "'smart' must map disk names"),
        ({"smart": {"sdd": 5}}, "'smart' for 'sdd' must be text"),
        ({"devlinks": 5}, "'devlinks' must be"),
        ({"read_at": "now"}, "'read_at' must be"),
    ]:
        refused = api_client.post(
            f"/api/raid/hosts/{host.pk}/report",
            {"mdstat": seed_layout_mdstat(), **bad},
            format="json",
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )
        assert refused.status_code == 400 and says in refused.json()["error"]


def test_metrics_export_each_disks_health_and_counters(client, api_key, host):
    failing = (SMART / "scrutiny-usb-jmicron-failing.json").read_text()
    hidden = (SMART / "smartmontools-go-usb-bridge-unknown.json").read_text()
    ingest(host, seed_layout_mdstat(), smart=smart(sdd=failing, sdl=hidden))
    response = client.get("/metrics", headers={"Authorization": f"Bearer {api_key()}"})
    found = samples(response)
    failing_disks = {s.labels["device"] for s in found["vigil_raid_disk_failing"] if s.value}
    assert failing_disks == {"sdd"}
    readable = {s.labels["device"]: s.value for s in found["vigil_raid_disk_smart_readable"]}
    assert readable["sdl"] == 0 and readable["sdb"] == 1
    assert "sdl" not in {s.labels["device"] for s in found["vigil_raid_disk_failing"]}
    pending = {s.labels["serial"]: s.value for s in found["vigil_raid_disk_pending_sectors"]}
    assert pending["MSK423Y20S3HBC"] == 8

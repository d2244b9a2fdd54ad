"""Disks stored from reports: the same row across renames, the history, the page, the API and
/metrics, with the demo's failing disk."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.lib import retention
from apps.raid import demo
from apps.raid.collect import ingest
from apps.raid.demo import seed_devlinks, seed_layout_mdstat, seed_smart, seed_sysfs
from apps.raid.models import Array, Disk, DiskReading, Host, Member
from apps.regions import concerns, tasks
from tests.helpers import SHARED_FIXTURES
from tests.prometheus.test_views import samples

pytestmark = pytest.mark.django_db

DISKS = [f"sd{c}" for c in "bcdefghijklmnop"]
SMART = SHARED_FIXTURES / "smartctl"
EMPTY = "Personalities : \nunused devices: <none>\n"


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
    ingest(host, EMPTY, smart={})
    assert Disk.objects.filter(host=host, present=True).count() == 0
    assert Disk.objects.filter(host=host).count() == 15


def test_gone_disks_and_their_readings_expire_like_gone_arrays_and_present_ones_stay(host):
    """Issue 26: gone disks were kept forever; they go after VIGIL_RAID_GONE_ARRAY_RETENTION_DAYS
    (30) from when a report first no longer had them, with their readings, by the beat."""
    now = timezone.now()
    ingest(host, seed_layout_mdstat(), smart=smart(), now=now - timedelta(days=40))
    ingest(host, EMPTY, smart={}, now=now - timedelta(days=35))  # all 15 gone since then
    assert set(Disk.objects.filter(host=host).values_list("gone_since", flat=True)) == {
        now - timedelta(days=35)
    }
    sdd = Disk.objects.get(host=host, device="sdd")
    Disk.objects.filter(pk=sdd.pk).update(gone_since=now - timedelta(days=29))  # gone lately
    other = Host.objects.create(name="storage-other", region=host.region)
    ingest(other, seed_layout_mdstat(), smart=smart(), now=now - timedelta(days=40))
    ingest(other, EMPTY, smart={}, now=now - timedelta(days=39))
    ingest(other, seed_layout_mdstat(), smart=smart(), now=now - timedelta(days=38))  # back
    assert not Disk.objects.filter(host=other).exclude(present=True, gone_since=None).exists()

    deleted = retention.expire_all(now, concerns.histories())

    assert deleted["raid.Disk"] == 14
    assert list(Disk.objects.filter(host=host)) == [sdd]
    assert set(DiskReading.objects.filter(disk__host=host).values_list("disk", flat=True)) == {
        sdd.pk
    }
    assert Disk.objects.filter(host=other, present=True).count() == 15  # present: kept
    assert not Member.objects.exclude(disk=None).exclude(disk__in=Disk.objects.all()).exists()


def test_the_beat_task_expires_gone_disks(host, settings):
    settings.VIGIL_RAID_GONE_ARRAY_RETENTION_DAYS = 1
    ingest(host, seed_layout_mdstat(), smart=smart(), now=timezone.now() - timedelta(days=3))
    ingest(host, EMPTY, smart={}, now=timezone.now() - timedelta(days=2))
    tasks.expire_history()
    assert not Disk.objects.filter(host=host).exists()


@pytest.fixture
def demo_host(settings):
    return demo.set_up()


def test_the_demo_page_names_the_failing_disk_its_server_and_the_commands(
    logged_in_client, demo_host
):
    page = logged_in_client.get(f"/raid/hosts/{demo_host.pk}/").content.decode()
    page = " ".join(page.split())  # as a browser shows it: the template wraps its lines
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

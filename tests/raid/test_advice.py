"""Replacement advice: the disk, where it is, the path to the top and the mdadm commands."""

from __future__ import annotations

from apps.raid.demo import SEED_RULES, seed_devlinks, seed_layout_mdstat, seed_smart
from apps.raid.report import assess

DISKS = [f"sd{c}" for c in "bcdefghijklmnop"]


def demo_report(**kwargs):
    smart = {disk: seed_smart(disk) for disk in DISKS}
    return assess(
        seed_layout_mdstat(**kwargs),
        rules=SEED_RULES,
        noun="storage server",
        smart=smart,
        devlinks=seed_devlinks(),
    )


def test_a_failing_member_gets_its_disk_server_path_iscsi_lun_and_commands_in_order():
    md3 = next(a for a in demo_report().arrays if a.name == "md3")
    [advice] = md3.advice
    assert advice["path"] == "md99 → md3 → sdd"
    assert (advice["disk"], advice["serial"], advice["domain"]) == ("sdd", "ZBS04114", "storage-a")
    assert advice["by_id"] == "wwn-0x5000c500a9dfac86"
    assert advice["iscsi"] == "target iqn.2026-01.example.storage-a:disks LUN 2 at 192.0.2.11:3260"
    assert advice["why"] == "failing SMART: pending sectors 24"
    assert advice["commands"] == [
        "mdadm --manage /dev/md3 --fail /dev/disk/by-id/wwn-0x5000c500a9dfac86",
        "mdadm --manage /dev/md3 --remove /dev/disk/by-id/wwn-0x5000c500a9dfac86",
        "mdadm --manage /dev/md3 --add /dev/sdd",
    ]
    assert any("--replace" in note for note in advice["notes"])
    assert any("iscsiadm -m session --rescan" in note for note in advice["notes"])


def test_a_member_md_failed_gets_advice_even_without_smart():
    report = assess(seed_layout_mdstat(failed=["sdg"]), rules=SEED_RULES, noun="storage server")
    md1 = next(a for a in report.arrays if a.name == "md1")
    [advice] = md1.advice
    assert (advice["why"], advice["path"], advice["domain"]) == (
        "md marked it failed",
        "md99 → md1 → sdg",
        "storage-b",
    )
    assert advice["commands"][0] == "mdadm --manage /dev/md1 --fail /dev/sdg"
    assert "md already marked it failed: --fail only confirms it" in advice["notes"]

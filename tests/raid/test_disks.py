"""Disks under the arrays: identity across renames, and failing disks in the topology."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from apps.raid.demo import FAILING, SEED_RULES, seed_devlinks, seed_layout_mdstat, seed_smart
from apps.raid.disks import identity, thresholds_from
from apps.raid.parse_devlinks import Links
from apps.raid.parse_smartctl import parse
from apps.raid.report import assess
from apps.raid.topology import Topology
from tests.helpers import SHARED_FIXTURES

DISKS = [f"sd{c}" for c in "bcdefghijklmnop"]
FAILING_TEXT = (SHARED_FIXTURES / "smartctl" / "scrutiny-usb-jmicron-failing.json").read_text()


def seed(failing: str = FAILING, **changes: str) -> dict[str, str]:
    return {disk: seed_smart(disk, failing) for disk in DISKS} | changes


def test_a_disk_is_known_by_its_wwn_then_serial_then_by_id_name():
    sata = parse((SHARED_FIXTURES / "smartctl" / "scrutiny-sata-wdc-healthy.json").read_text())
    assert identity(sata, None, "sdc") == ("wwn:0x5000cca264eb01d7", True)
    assert identity(sata, None, "sdd") == identity(sata, None, "sdc")  # renamed: the same disk
    redacted = parse((SHARED_FIXTURES / "smartctl" / "netdata-sas-hgst-healthy.json").read_text())
    assert identity(redacted, Links(by_id=("scsi-35000cca0",)), "sda") == (
        "by-id:scsi-35000cca0",
        True,
    )
    assert identity(None, None, "sdz") == ("dev:sdz", False)


@pytest.mark.parametrize(
    ("given", "problem"),
    [({"pending": 1}, "'pending' is not a disk threshold"), ({"pending_sectors": -1}, "from 0")],
)
def test_disk_thresholds_are_checked(given, problem):
    with pytest.raises(ValueError, match=problem):
        thresholds_from(given)


def test_a_failing_disk_counts_as_gone_in_the_headroom():
    topology = Topology.from_text(seed_layout_mdstat())
    assert topology.headroom("md3").more_failures == 2
    assert topology.headroom_if_lost("md3", frozenset({"sdd"})) == 1
    assert topology.headroom_if_lost("md99", frozenset({"sdd", "sdi"})) == 0
    assert topology.headroom_if_lost("md99", frozenset({"sdd", "sdi", "sdn"})) is None


def test_the_demo_names_its_failing_disk_in_the_headroom_and_warns_before_md_fails_it():
    report = assess(
        seed_layout_mdstat(),
        rules=SEED_RULES,
        noun="storage server",
        smart=seed(),
        devlinks=seed_devlinks(),
    )
    md3 = next(a for a in report.arrays if a.name == "md3")
    assert md3.verdict.status.value == "warning"
    assert "sdd (serial ZBS04114) is failing SMART: pending sectors 24" in md3.verdict.reason
    assert md3.headroom_text == (
        "md3 survives any 2 more disk failures; sdd (serial ZBS04114) is failing SMART: "
        "pending sectors 24: once it goes, any 1 more"
    )
    md99 = next(a for a in report.arrays if a.name == "md99")
    assert "sdd (serial ZBS04114, in md3) is failing SMART" in md99.headroom_text
    assert md99.verdict.status.value == "warning"
    assert report.disks["sdd"].key == "wwn:0x5000c500a9dfac86"
    assert [a.name for a in report.arrays if a.advice] == ["md3"]


def test_a_failing_disk_that_holds_the_last_copy_makes_its_array_critical():
    mdstat = seed_layout_mdstat(failed=["sdd", "sdi"])
    report = assess(mdstat, smart=seed(failing="sdn") | {"sdn": FAILING_TEXT})
    md3 = next(a for a in report.arrays if a.name == "md3")
    assert md3.verdict.status.value == "critical"
    assert "sdn (serial MSK423Y20S3HBC) is failing SMART" in md3.verdict.reason
    assert "md3 stops if it goes" in md3.verdict.reason
    assert {a["member"] for a in md3.advice} == {"sdd", "sdi", "sdn"}


def test_disks_smart_cannot_read_are_unknown_and_change_no_array():
    hidden = (SHARED_FIXTURES / "smartctl" / "smartmontools-go-usb-bridge-unknown.json").read_text()
    report = assess(seed_layout_mdstat(), smart=seed(failing="") | {"sdl": hidden, "sdm": "junk"})
    assert {a.verdict.status.value for a in report.arrays} == {"ok"}
    assert report.disks["sdl"].health.summary.startswith("SMART cannot read it: ")
    assert report.disks["sdm"].health.summary == (
        "SMART not read: not JSON: smartctl older than 7.0 (no --json), or not smartctl"
    )
    assert report.disks["sdb"].health.summary == "SMART passed"
    without = assess(seed_layout_mdstat())
    assert without.disks["sdb"].health.summary == "SMART not read: the host sent no SMART"
    assert without.disks["sdb"].health.status.value == "unknown"


def test_a_partition_member_is_judged_by_its_disk():
    mdstat = (SHARED_FIXTURES / "mdstat" / "einverne-raid1-4disk-bitmap.txt").read_text()
    report = assess(mdstat, smart={"sdc": FAILING_TEXT}, now=datetime(2026, 11, 26, tzinfo=UTC))
    disk = report.disks["sdc"]
    assert disk.members and all(m.startswith("sdc") for m in disk.members)
    assert disk.health.failing

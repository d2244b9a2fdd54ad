"""The /dev/disk/by-id and by-path lines the agent and the SSH pull send."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from apps.raid.parse_devlinks import MAX_LINES, Iscsi, parse

LINES = """\
/dev/disk/by-id/ata-ST1000NM0055-1V410C_ZBS04114 -> ../../sdd
/dev/disk/by-id/wwn-0x5000c500a9dfac86 -> ../../sdd
/dev/disk/by-id/wwn-0x5000c500a9dfac86-part1 -> ../../sdd1
/dev/disk/by-path/ip-192.0.2.11:3260-iscsi-iqn.2026-01.example.storage-a:disks-lun-2 -> ../../sdd
/dev/disk/by-id/nvme-eui.6479a72801424331 -> ../../nvme0n1
/dev/disk/by-id/evil;rm -rf / -> ../../sde
/dev/disk/by-id/ok -> ../../../etc/passwd
/dev/disk/by-uuid/1234 -> ../../sdf
"""


def test_it_reads_each_disks_stable_names_and_its_iscsi_target_and_lun():
    links = parse(LINES)
    assert sorted(links) == ["nvme0n1", "sdd", "sdd1"]
    sdd = links["sdd"]
    assert sdd.by_id == ("ata-ST1000NM0055-1V410C_ZBS04114", "wwn-0x5000c500a9dfac86")
    assert sdd.preferred == "wwn-0x5000c500a9dfac86"
    assert sdd.iscsi == Iscsi("192.0.2.11:3260", "iqn.2026-01.example.storage-a:disks", 2)
    assert links["sdd1"].preferred == "wwn-0x5000c500a9dfac86-part1"
    assert links["nvme0n1"].iscsi is None


def test_it_reads_at_most_its_bound_of_lines():
    lines = [
        f"/dev/disk/by-id/wwn-{i} -> ../../sd{chr(97 + i % 26)}" for i in range(MAX_LINES + 50)
    ]
    found = parse("\n".join(lines))
    assert sum(len(links.by_id) for links in found.values()) <= MAX_LINES


@settings(max_examples=200)
@given(st.text(alphabet=st.sampled_from(list("/devisk-bypath>. :0123\n\x00é")), max_size=300))
def test_any_text_is_read_or_left_out_never_raised(text):
    for device, links in parse(text).items():
        assert device.isascii() and len(device) <= 32
        assert all(name.isascii() for name in links.by_id + links.by_path)

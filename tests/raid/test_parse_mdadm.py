"""The ``mdadm --detail`` parser on what the samples do not show (tests/raid/test_parsers.py has
the samples, bad lines and damaged copies, as for /proc/mdstat)."""

from __future__ import annotations

from apps.raid.parse_mdadm import parse
from tests.helpers import SHARED_FIXTURES

FIXTURES = SHARED_FIXTURES / "mdadm-detail"


def test_it_names_members_as_proc_mdstat_does_and_finds_their_slots():
    detail = parse((FIXTURES / "einverne-raid10-near2-recovering.txt").read_text())
    assert [m.name for m in detail.members] == ["sdb2", "sdd2", "sda2", "sdc2"]
    assert detail.slot_of("sdd2") == 1
    assert detail.slot_of("sda2") is None
    assert detail.slot_of("sdz") is None


def test_it_ignores_header_keys_it_does_not_model():
    text = (
        "/dev/md0:\n"
        "        Version : 1.2\n"
        "   Check Status : 12% complete\n"
        "  Member Arrays : /dev/md/vol0\n"
        "          State : clean, checking\n"
    )
    detail = parse(text)
    assert detail.state_flags == ["clean", "checking"]
    assert detail.version == "1.2"


def test_it_reads_a_container_table_without_a_state_column():
    text = (
        "/dev/md127:\n"
        "        Version : imsm\n"
        "     Raid Level : container\n"
        "\n"
        "    Number   Major   Minor   RaidDevice\n"
        "\n"
        "       -       8       16        -        /dev/sdb\n"
    )
    (member,) = parse(text).members
    assert (member.number, member.raid_device, member.state, member.device) == (
        None,
        None,
        "",
        "/dev/sdb",
    )

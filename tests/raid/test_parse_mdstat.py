"""The /proc/mdstat parser on what the kernel prints beyond the samples (tests/raid/test_parsers.py
has the samples, bad lines and damaged copies, as for ``mdadm --detail``)."""

from __future__ import annotations

import pytest

from apps.raid.errors import ParseError
from apps.raid.parse_mdstat import parse


def test_it_reads_a_tab_before_resync_delayed_as_the_kernel_prints_it():
    text = (
        "Personalities : [raid1]\n"
        "md9 : active raid1 sdb2[1] sda2[0]\n"
        "      523968 blocks super 1.2 [2/2] [UU]\n"
        "      \tresync=DELAYED\n"
        "      \n"
        "unused devices: <none>\n"
    )
    sync = parse(text).arrays[0].sync
    assert (sync.action, sync.state, sync.percent) == ("resync", "DELAYED", None)


def test_it_keeps_an_absurd_finish_estimate_and_a_zero_speed_as_numbers():
    text = (
        "Personalities : [raid5]\n"
        "md0 : active raid5 sdc1[3] sdb1[1] sda1[0]\n"
        "      976767872 blocks level 5, 64k chunk, algorithm 2 [3/2] [UU_]\n"
        "      [>....................]  recovery =  0.0% (1024/488383936) "
        "finish=4294967295.9min speed=0K/sec\n"
    )
    sync = parse(text).arrays[0].sync
    assert sync.finish_minutes == 4294967295.9
    assert sync.speed_kib_per_sec == 0


def test_it_reads_device_mapper_members_write_mostly_and_replacement_flags():
    text = (
        "Personalities : [raid1]\n"
        "md5 : active raid1 dm-3[2](R) dm-1[0](W) nvme0n1p2[1]\n"
        "      1046528 blocks super 1.2 [2/2] [UU]\n"
    )
    array = parse(text).arrays[0]
    assert [m.device for m in array.members] == ["dm-3", "dm-1", "nvme0n1p2"]
    assert array.write_mostly_members == ["dm-1"]
    assert array.replacement_members == ["dm-3"]
    assert parse(text).unused_devices is None


def test_it_reads_a_raid10_with_near_and_far_copies_and_a_set_size():
    text = (
        "Personalities : [raid10]\n"
        "md3 : active raid10 sdd[3] sdc[2] sdb[1] sda[0]\n"
        "      2093056 blocks super 1.2 512K chunks 2 near-copies 2 far-copies 2 devices per set"
        " [4/4] [UUUU]\n"
    )
    layout = parse(text).arrays[0].raid10_layout
    assert layout == "2 near-copies 2 far-copies 2 devices per set"


def test_it_refuses_a_number_too_long_to_be_real_with_a_parse_error():
    with pytest.raises(ParseError):
        parse("Personalities : [raid0]\nmd0 : active raid0 sda[0]\n" + "9" * 5000 + " blocks\n")

"""What nested arrays can still lose: the seed layout, RAID-10 layouts and every sample."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apps.raid.demo import SEED_ARRAYS, SEED_DOMAINS, seed_layout_mdstat
from apps.raid.errors import ParseError
from apps.raid.parse_mdadm import parse as parse_detail
from apps.raid.parse_mdstat import Array, Mdstat, Member, parse
from apps.raid.raid10 import copy_groups, raid10_copy_groups
from apps.raid.topology import (
    Topology,
    describe_domains,
    describe_headroom,
    domain_of,
    survivable_domain_failures,
)
from tests.helpers import SHARED_FIXTURES

FIXTURES = SHARED_FIXTURES
SAMPLES = sorted((FIXTURES / "mdstat").glob("*.txt"))

# The seed written out as a 6.x kernel prints it (md3 lost its storage-a disk, sdd).
SEED_WITH_ONE_FAILED_DISK = """\
Personalities : [raid10] [raid0]
md99 : active raid0 md5[4] md4[3] md3[2] md2[1] md1[0]
      5368053760 blocks super 1.2 512k chunks

md5 : active raid10 sdp[2] sdk[1] sdf[0]
      1073610752 blocks super 1.2 512K chunks 3 offset-copies [3/3] [UUU]
      bitmap: 1/8 pages [4KB], 65536KB chunk

md4 : active raid10 sdo[2] sdj[1] sde[0]
      1073610752 blocks super 1.2 512K chunks 3 offset-copies [3/3] [UUU]
      bitmap: 1/8 pages [4KB], 65536KB chunk

md3 : active raid10 sdn[2] sdi[1] sdd[0](F)
      1073610752 blocks super 1.2 512K chunks 3 offset-copies [3/2] [_UU]
      bitmap: 1/8 pages [4KB], 65536KB chunk

md2 : active raid10 sdm[2] sdh[1] sdc[0]
      1073610752 blocks super 1.2 512K chunks 3 offset-copies [3/3] [UUU]
      bitmap: 1/8 pages [4KB], 65536KB chunk

md1 : active raid10 sdl[2] sdg[1] sdb[0]
      1073610752 blocks super 1.2 512K chunks 3 offset-copies [3/3] [UUU]
      bitmap: 1/8 pages [4KB], 65536KB chunk

unused devices: <none>
"""
SERVERS = {
    **{f"sd{d}": "storage-a" for d in "bcdef"},
    **{f"sd{d}": "storage-b" for d in "ghijk"},
    **{f"sd{d}": "storage-c" for d in "lmnop"},
}


def test_the_seed_survives_the_loss_of_any_two_of_three_storage_servers():
    assert survivable_domain_failures(seed_layout_mdstat(), SERVERS, "md99") == 2


def test_the_seed_survives_only_one_more_server_after_a_disk_failed_in_md3():
    assert survivable_domain_failures(SEED_WITH_ONE_FAILED_DISK, SERVERS, "md99") == 1


def test_the_demo_generator_writes_the_same_arrays_as_the_hand_written_sample():
    generated = parse(seed_layout_mdstat(failed={"sdd"}))
    assert generated.as_dict() == parse(SEED_WITH_ONE_FAILED_DISK).as_dict()
    assert SEED_DOMAINS == SERVERS
    assert SEED_ARRAYS["md3"] == ("sdd", "sdi", "sdn")


def test_it_says_the_seed_headroom_in_words():
    topology = Topology.from_text(seed_layout_mdstat())
    headroom = topology.domain_headroom("md99", SERVERS)
    assert describe_domains(headroom, "storage server") == (
        "md99 survives the loss of any 2 of the 3 storage servers"
    )
    after = Topology.from_text(SEED_WITH_ONE_FAILED_DISK).domain_headroom("md99", SERVERS)
    assert after.smallest_fatal_set == ("storage-b", "storage-c")
    assert describe_domains(after, "storage server") == (
        "md99 survives the loss of any 1 of the 3 storage servers; "
        "losing storage-b and storage-c together would stop it"
    )


def test_a_rebuilding_disk_does_not_count_until_it_is_in_sync():
    text = seed_layout_mdstat(rebuilding="sdd", percent=37.4)
    assert parse(text).array("md3").sync.percent == 37.4
    assert survivable_domain_failures(text, SERVERS, "md99") == 1


def test_two_failed_disks_in_one_mirror_leave_one_server_that_must_not_fail():
    topology = Topology.from_text(seed_layout_mdstat(failed={"sdd", "sdi"}))
    headroom = topology.domain_headroom("md99", SERVERS)
    assert (headroom.survivable, headroom.fatal_alone) == (0, ("storage-c",))
    assert describe_domains(headroom, "storage server") == (
        "md99 cannot lose any storage server: losing storage-c alone would stop it"
    )


def test_every_disk_of_md3_failed_stops_the_whole_stack():
    text = seed_layout_mdstat(failed={"sdd", "sdi", "sdn"})
    topology = Topology.from_text(text)
    assert not topology.alive("md99", frozenset())
    assert describe_domains(topology.domain_headroom("md99", SERVERS)) == "md99 is not running"
    assert survivable_domain_failures(text, SERVERS, "md99") == 0


def test_the_seed_survives_any_two_more_disks_and_says_so():
    topology = Topology.from_text(seed_layout_mdstat())
    headroom = topology.headroom("md99")
    assert headroom.more_failures == 2
    assert [c.more_failures for c in headroom.children] == [2] * 5
    assert headroom.redundant_by_design and headroom.designed_tolerance == 0
    assert describe_headroom(headroom) == "md99 survives any 2 more disk failures"
    assert topology.roots() == ["md99"]


def test_unmapped_devices_are_their_own_domain_and_partitions_inherit_their_disk():
    assert survivable_domain_failures(seed_layout_mdstat(), {}, "md99") == 2
    assert domain_of("sdc1", {"sdc": "shelf-1"}) == "shelf-1"
    assert domain_of("nvme0n1p2", {"nvme0n1": "slot-0"}) == "slot-0"
    assert domain_of("dm-3", {"dm": "x"}) == "dm-3"


def test_it_refuses_an_unknown_array_and_unreadable_text():
    with pytest.raises(KeyError):
        survivable_domain_failures(seed_layout_mdstat(), SERVERS, "md7")
    with pytest.raises(ParseError):
        survivable_domain_failures("not mdstat", SERVERS, "md99")


@pytest.mark.parametrize(
    ("disks", "near", "far", "groups"),
    [
        (4, 2, 1, [{0, 1}, {2, 3}]),  # near=2: pairs of neighbours
        (3, 2, 1, [{0, 1}, {1, 2}, {2, 0}]),  # near=2 over an odd number of disks
        (4, 1, 2, [{0, 1}, {1, 2}, {2, 3}, {3, 0}]),  # far=2 / offset=2: next disk holds the copy
        (3, 1, 3, [{0, 1, 2}]),  # the seed's o3 over three disks: every disk holds every chunk
        (4, 2, 2, [{0, 1, 2, 3}]),
        (6, 3, 1, [{0, 1, 2}, {3, 4, 5}]),
    ],
)
def test_it_knows_which_raid10_slots_hold_all_copies_of_a_chunk(disks, near, far, groups):
    assert raid10_copy_groups(disks, near, far) == {frozenset(g) for g in groups}


def test_far_copies_stay_inside_their_set_when_sets_are_smaller_than_the_array():
    assert raid10_copy_groups(4, 1, 2, far_set_size=2) == {frozenset({0, 1}), frozenset({2, 3})}


@given(st.integers(2, 12), st.integers(1, 4), st.integers(1, 4))
def test_copy_groups_match_the_kernels_own_enough_check(disks, near, far):
    """drivers/md/raid10.c _enough(): windows of near*far slots starting every near slots."""
    if near * far > disks:
        return
    windows, first = set(), 0
    while True:
        windows.add(frozenset((first + i) % disks for i in range(near * far)))
        first = (first + near) % disks
        if first == 0:
            break
    assert raid10_copy_groups(disks, near, far) == windows


def test_it_counts_a_raid10_that_lost_one_disk_per_mirror_as_alive():
    text = (
        "Personalities : [raid10]\n"
        "md0 : active raid10 sdd[3] sdc[2] sdb[1] sda[0]\n"
        "      2093056 blocks super 1.2 512K chunks 2 near-copies [4/2] [U_U_]\n"
    )
    headroom = Topology.from_text(text).headroom("md0")
    assert (headroom.running, headroom.more_failures) == (True, 0)


def test_it_counts_an_offset_raid10_that_lost_two_neighbours_as_stopped():
    """The linux-raid 2019 sample: the kernel still printed 'active', but slots 1 and 2 held
    both copies of every other chunk, so data is gone."""
    mdstat = parse(
        (FIXTURES / "mdstat" / "linux-raid-2019-raid10-offset-copies-2-failed.txt").read_text()
    )
    topology = Topology(mdstat)
    assert not topology.headroom("md1").running
    assert topology.headroom("md0").more_failures == 3


def test_a_nested_raid0_over_raid6_survives_what_each_raid6_survives():
    text = (FIXTURES / "mdstat" / "scratchbox-nested-raid0-over-raid6.txt").read_text()
    topology = Topology.from_text(text)
    headroom = topology.headroom("md121")
    assert headroom.more_failures == 2
    assert {c.array for c in headroom.children} == {"md240", "md241", "md242", "md243"}
    assert "md240" not in topology.roots()


def test_a_raid4_mid_reshape_is_judged_by_the_kernels_degraded_count():
    text = (FIXTURES / "mdstat" / "pymdstat-13-raid4-reshape.txt").read_text()
    headroom = Topology.from_text(text).headroom("md127")
    assert (headroom.running, headroom.more_failures) == (True, 0)


def test_it_uses_the_raid_device_column_of_mdadm_detail_for_slots():
    detail = parse_detail(
        (FIXTURES / "mdadm-detail" / "einverne-raid10-near2-clean-final.txt").read_text()
    )
    text = (
        "Personalities : [raid10]\n"
        "md2 : active raid10 sdd2[5] sdc2[4] sda2[3] sdb2[2]\n"
        "      1023737856 blocks super 1.2 64K chunks 2 near-copies [4/4] [UUUU]\n"
    )
    without = Topology(parse(text))
    assert not without.headroom("md2").placement_known
    assert "worst case assumed" not in describe_headroom(
        Topology(parse(text), {"md2": detail}).headroom("md2")
    )
    with_detail = Topology(parse(text), {"md2": detail})
    # near=2 over 4: slots 0+1 (sdb2, sdd2) and 2+3 (sdc2, sda2) are the mirrors
    assert with_detail.alive("md2", frozenset({"sdb2", "sdc2"}))
    assert not with_detail.alive("md2", frozenset({"sdb2", "sdd2"}))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_the_recursive_count_agrees_with_trying_every_failure_set(sample):
    topology = Topology(parse(sample.read_text(encoding="utf-8")))
    for name in topology.nodes:
        leaves = sorted(topology.leaves(name))
        if len(leaves) > 14 or not topology.nodes[name].running:
            continue
        brute = next(
            (
                size - 1
                for size in range(1, len(leaves) + 1)
                if any(not topology.alive(name, frozenset(c)) for c in combinations(leaves, size))
            ),
            len(leaves),
        )
        assert topology.headroom(name).more_failures == brute, name


@given(st.sets(st.sampled_from(sorted(SERVERS)), max_size=6))
def test_any_damaged_seed_gets_the_headroom_a_search_over_disks_finds(failed):
    topology = Topology.from_text(seed_layout_mdstat(failed=failed))
    headroom = topology.headroom("md99")
    leaves = sorted(topology.leaves("md99"))
    kills = [
        size
        for size in range(1, 4)
        if any(not topology.alive("md99", frozenset(c)) for c in combinations(leaves, size))
    ]
    assert headroom.running == topology.alive("md99", frozenset())
    if headroom.running:
        assert headroom.more_failures == min(kills) - 1
        per_disk = topology.domain_headroom("md99", {})
        assert per_disk.survivable == headroom.more_failures
        assert len(per_disk.smallest_fatal_set) == min(kills)
        assert not topology.alive("md99", frozenset(per_disk.smallest_fatal_set))


def test_it_stops_searching_domain_sets_at_its_budget_and_says_so():
    topology = Topology.from_text(seed_layout_mdstat())
    headroom = topology.domain_headroom("md99", SERVERS, max_sets=2)
    assert (headroom.survivable, headroom.complete) == (0, False)
    assert describe_domains(headroom, "storage server") == (
        "md99 survives the loss of any 0 of the 3 storage servers "
        "(at least; too many combinations to try them all)"
    )


def test_array_names_that_loop_are_refused_and_never_walked_forever():
    text = (
        "Personalities : [raid1]\n"
        "md1 : active raid1 md2[0] sda[1]\n"
        "      1024 blocks [2/2] [UU]\n"
        "md2 : active raid1 md1[0] sdb[1]\n"
        "      1024 blocks [2/2] [UU]\n"
    )
    with pytest.raises(ParseError, match="^line 2: md1 is inside itself"):
        parse(text)

    def mirror(name: str, over: str, disk: str) -> Array:
        members = (Member(over, 0), Member(disk, 1))
        return Array(
            name,
            "active",
            level="raid1",
            members=members,
            raid_disks=2,
            active_disks=2,
            status="UU",
        )

    topology = Topology(
        Mdstat((), (mirror("md1", "md2", "sda"), mirror("md2", "md1", "sdb")), None)
    )
    assert topology.headroom("md1").running
    assert topology.roots() == []


@pytest.mark.parametrize(
    ("layout", "disks", "groups"),
    [
        ("3 offset-copies", 3, [{0, 1, 2}]),
        ("2 near-copies", 4, [{0, 1}, {2, 3}]),
        ("near=2", 4, [{0, 1}, {2, 3}]),
        ("offset=2", 3, [{0, 1}, {1, 2}, {2, 0}]),
        ("2 near-copies 2 far-copies", 4, [{0, 1, 2, 3}]),
        (None, 2, [{0}, {1}]),
    ],
)
def test_it_reads_copy_groups_from_mdstat_and_mdadm_layout_text(layout, disks, groups):
    assert copy_groups(layout, disks) == {frozenset(g) for g in groups}

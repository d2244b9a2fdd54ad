"""Reports larger or stranger than a real host sends: refused with the line, or bounded."""

from __future__ import annotations

import pytest

from apps.lib.status import Status
from apps.raid import bounds
from apps.raid.bounds import Budget, TooLarge
from apps.raid.errors import ParseError
from apps.raid.parse_mdadm import parse as parse_detail
from apps.raid.parse_mdstat import parse
from apps.raid.report import assess
from apps.raid.topology import Topology
from tests.helpers import SHARED_FIXTURES
from tests.raid.builders import (
    many_domains_three_way,
    mdstat,
    mirror,
    nested_mirrors,
    raid10,
)


def test_a_chain_of_hundreds_of_nested_mirrors_is_refused_at_once_naming_the_line():
    text = nested_mirrors(250)  # took minutes of CPU, or raised RecursionError
    with pytest.raises(ParseError) as caught:
        assess(text)
    assert caught.value.args[0].startswith(
        "/proc/mdstat, line 18: arrays nested more than 8 deep (md8 in md7 in md6 in md5"
    )


def test_arrays_nested_as_deep_as_allowed_are_judged():
    report = assess(nested_mirrors(bounds.MAX_NESTING))
    top = report.arrays[0]
    assert (top.name, top.verdict.status, top.headroom) == ("md0", Status.OK, 8)


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        (mdstat(mirror("md0", "sd\x00a", "sdb")), 2, "a NUL character, which cannot be stored"),
        (mdstat(mirror("md0", "sd\udcffa", "sdb")), 2, "bytes that are not UTF-8 text"),
        (mdstat(mirror("md" + "9" * 70, "sda", "sdb")), 2, "array name longer than 64"),
        (mdstat(mirror("md0", "s" * 101, "sdb")), 2, "member device name longer than 100"),
        (
            mdstat("md0 : active raid1 sda[123456789012345678901234] sdb[1]\n"),
            2,
            "member number 123456789012345678901234 is out of range",
        ),
        (
            mdstat("md0 : active raid1 sda[0]\n      123456789012345678901234 blocks [1/1] [U]\n"),
            3,
            "size 123456789012345678901234 is out of range",
        ),
        (
            mdstat("md0 : active raid1 sda[0]\n      1024 blocks [1/2] [U]\n"),
            3,
            "active disks 2 is out of range (at most 1)",
        ),
        (mdstat(raid10("md0", 4, "3 near-copies 2 far-copies")), 3, "6 copies of each chunk"),
        (mdstat(raid10("md0", 4, "5 near-copies")), 3, "5 near is impossible on 4 disks"),
        (
            mdstat(mirror("md0", "md1", "md1"), mirror("md1", "sda", "sdb")),
            2,
            "array md1 is listed twice",
        ),
        (
            mdstat(
                mirror("md0", "md2", "sda"),
                mirror("md1", "md2", "sdb"),
                mirror("md2", "sdc", "sdd"),
            ),
            4,
            "array md2 is listed in md0 too",
        ),
        (mdstat(mirror("md0", "md0", "sda")), 2, "md0 is inside itself"),
        (
            mdstat(*(mirror(f"md{i}", f"a{i}", f"b{i}") for i in range(257))),
            2 + 2 * 256,
            "more than 256 arrays",
        ),
        (mdstat(mirror("md0", *(f"d{i}" for i in range(257)))), 2, "more than 256 members"),
    ],
    ids=[
        "nul",
        "undecodable",
        "long-array-name",
        "long-device",
        "24-digit-role",
        "24-digit-size",
        "more-active-than-disks",
        "copies-beyond-disks",
        "near-copies-beyond-disks",
        "array-twice-in-one",
        "array-in-two",
        "array-in-itself",
        "too-many-arrays",
        "too-many-members",
    ],
)
def test_it_refuses_what_cannot_be_stored_or_is_beyond_a_bound_naming_the_line(text, line, problem):
    with pytest.raises(ParseError) as caught:
        parse(text)
    assert caught.value.line_number == line
    assert problem in caught.value.problem


def test_it_refuses_more_member_devices_in_one_report_than_the_bound():
    arrays = [mirror(f"md{i}", *(f"x{i}d{k}" for k in range(20))) for i in range(210)]
    with pytest.raises(ParseError, match="more than 4096 member devices"):
        parse(mdstat(*arrays))


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("   0   8  16  99999999999  active sync   /dev/sdb", "a number out of range"),
        ("   0   8  16  0  " + "active " * 20 + "  /dev/sdb", "member state longer than 100"),
        ("   0   8  16  0  active sync   /dev/sd\x00b", "a NUL character"),
    ],
)
def test_a_detail_row_that_cannot_be_stored_is_refused_naming_the_line(row, problem):
    text = (
        "/dev/md0:\n    Raid Level : raid1\n\n    Number   Major   Minor   RaidDevice State\n" + row
    )
    with pytest.raises(ParseError) as caught:
        parse_detail(text)
    assert caught.value.line_number == 5
    assert problem in caught.value.problem


def test_a_report_keeps_only_the_details_of_arrays_that_exist():
    detail = (SHARED_FIXTURES / "mdadm-detail" / "einverne-raid1-clean-bitmap.txt").read_text()
    text = (SHARED_FIXTURES / "mdstat" / "einverne-raid1-4disk-bitmap.txt").read_text()
    report = assess(text, {"/dev/md2": detail, "md77": "not even a detail\x00", "md78": detail})
    assert set(report.details) == set(report.detail_texts) == {"md2"}


def test_a_domain_search_beyond_the_budget_answers_too_large_to_judge_quickly():
    text, rules = many_domains_three_way(120, 90)
    report = assess(text, None, rules, "server")  # bench/hostile.py: how long it takes
    top = report.arrays[0]
    assert report.too_large
    assert top.domain_headroom is None
    assert top.domain_headroom_text == "md0: loss of servers too large to judge"
    assert top.headroom == 2 and top.verdict.status is Status.OK  # the cheap part still judged


def test_a_host_whose_headroom_is_beyond_the_budget_is_unknown_never_ok():
    budget = Budget(10)
    report = assess(mdstat(raid10("md0", 64, "2 near-copies")), budget=budget)
    md0 = report.arrays[0]
    assert md0.verdict.status is Status.UNKNOWN
    assert md0.verdict.reason == "md0: headroom too large to judge"
    assert md0.headroom is None and md0.headroom_text == "md0: headroom too large to judge"
    assert {m.state for m in md0.members} == {"not judged"}


def test_a_degraded_array_beyond_the_budget_is_still_critical():
    text = mdstat("md0 : active raid1 sda[0] sdb[1](F)\n      1024 blocks [2/1] [U_]\n")
    md0 = assess(text, budget=Budget(0)).arrays[0]
    assert md0.verdict.status is Status.CRITICAL
    assert md0.verdict.reason == (
        "md0: failed member sdb; degraded: 1 of 2 members in sync [U_]; headroom too large to judge"
    )


def test_every_walk_of_the_topology_pays_from_its_budget():
    topology = Topology(parse(nested_mirrors(8)), budget=Budget(5))
    with pytest.raises(TooLarge):
        topology.headroom("md0")


def test_texts_are_cut_to_what_their_columns_hold():
    noun = "storage server with a very long name indeed"
    arrays = [mirror("md0", *(f"d{i}" for i in range(200)))]
    rules = {f"d{i}": f"{'x' * 150}-{i}" for i in range(200)}
    md0 = assess(mdstat(*arrays), None, rules, noun).arrays[0]
    assert len(md0.domain_headroom_text) <= 1000
    assert len(md0.headroom_text) <= 500


def test_a_detail_row_with_a_million_spaces_is_read_in_one_pass():
    """A lazy pattern read it in quadratic time: 2 s for 16,000 spaces, hours for a million."""
    text = (
        "/dev/md0:\n    Raid Level : raid1\n\n    Number   Major   Minor   RaidDevice State\n"
        "   0   8  16  0  active" + " " * 1_000_000 + "sync   /dev/sdb\n"
    )
    (member,) = parse_detail(text).members
    assert (member.state, member.device, member.raid_device) == ("active sync", "/dev/sdb", 0)

"""The /proc/mdstat parser against every published sample, and against damaged copies of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from apps.raid.errors import ParseError
from apps.raid.parse_mdstat import parse
from tests.conftest import SHARED_FIXTURES
from tests.raid.mutations import mutated

FIXTURES = SHARED_FIXTURES / "mdstat"
SAMPLES = sorted(FIXTURES.glob("*.txt"))
TEXTS = [p.read_text(encoding="utf-8") for p in SAMPLES]


def expected(sample: Path) -> dict:
    return json.loads(sample.with_name(f"{sample.stem}.expected.json").read_text())["expected"]


def test_it_finds_the_samples():
    assert len(SAMPLES) >= 23


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_it_reads_every_sample_to_its_expected_facts(sample):
    facts = parse(sample.read_text(encoding="utf-8")).as_dict()
    # json.dumps keeps key order and tells 17 from 17.0, so types and order must match too.
    assert json.dumps(facts) == json.dumps(expected(sample))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_it_reads_the_sample_the_same_with_tabs_crlf_and_no_indentation(sample):
    text = sample.read_text(encoding="utf-8")
    messy = "\r\n".join("\t" + line.strip() if line.strip() else line for line in text.split("\n"))
    assert parse(messy).as_dict() == expected(sample)


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


@pytest.mark.parametrize(
    ("text", "line_number"),
    [
        ("", 1),
        ("md0 : active raid1 sda[0]\n", 1),
        ("Personalities : [raid1]\nmd0 : active raid1 sda[0] sdb\n", 2),
        ("Personalities : [raid1]\n      1024 blocks [2/2] [UU]\n", 2),
        ("Personalities : [raid1]\nmd0 : active raid1 sda[0]\n  1024 blocks [2/2] [U]\n", 3),
        ("Personalities : [raid1]\nmd0 : active raid1 sda[0]\n  1024 blocks wibble\n", 3),
        ("Personalities : [raid1]\nmd0 : active raid1 sda[0]\n  resync = lots\n", 3),
        ("Personalities : [raid1]\nunused devices: <none>\nmd0 : active raid1 sda[0]\n", 3),
        ("Personalities : [raid1]\nmd0 : active raid1 sda[0]\nmd0 : active raid1 sdb[0]\n", 3),
    ],
)
def test_it_names_the_unreadable_line(text, line_number):
    with pytest.raises(ParseError) as error:
        parse(text)
    assert error.value.line_number == line_number
    assert f"line {line_number}:" in str(error.value)
    assert repr(text.split("\n")[line_number - 1]) in str(error.value)


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(TEXTS))
def test_it_raises_nothing_but_parse_error_on_damaged_samples(text):
    try:
        result = parse(text)
    except ParseError:
        return
    assert result.as_dict()["array_count"] == len(result.arrays)


def test_it_refuses_a_number_too_long_to_be_real_with_a_parse_error():
    with pytest.raises(ParseError):
        parse("Personalities : [raid0]\nmd0 : active raid0 sda[0]\n" + "9" * 5000 + " blocks\n")

"""The ``mdadm --detail`` parser against every published sample, and against damaged copies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from apps.raid.errors import ParseError
from apps.raid.parse_mdadm import parse
from tests.conftest import SHARED_FIXTURES
from tests.raid.mutations import mutated

FIXTURES = SHARED_FIXTURES / "mdadm-detail"
SAMPLES = sorted(FIXTURES.glob("*.txt"))
TEXTS = [p.read_text(encoding="utf-8") for p in SAMPLES]


def expected(sample: Path) -> dict:
    return json.loads(sample.with_name(f"{sample.stem}.expected.json").read_text())["expected"]


def test_it_finds_the_samples():
    assert len(SAMPLES) >= 11


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_it_reads_every_sample_to_its_expected_facts(sample):
    facts = parse(sample.read_text(encoding="utf-8")).as_dict()
    assert json.dumps(facts) == json.dumps(expected(sample))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_it_reads_the_sample_the_same_with_tabs_and_crlf(sample):
    text = sample.read_text(encoding="utf-8")
    messy = "\r\n".join(line.replace("    ", "\t") for line in text.split("\n"))
    assert parse(messy).as_dict() == expected(sample)


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


@pytest.mark.parametrize(
    ("text", "line_number"),
    [
        ("", 1),
        ("        Version : 1.2\n", 1),
        ("/dev/md0:\n   Raid Devices : two\n", 2),
        ("/dev/md0:\n     Array Size : big\n", 2),
        ("/dev/md0:\n          State : clean\n          State : active\n", 3),
        ("/dev/md0:\n Rebuild Status : almost\n", 2),
        ("/dev/md0:\nthis is not mdadm\n", 2),
        ("/dev/md0:\n    Number   Major   Minor   RaidDevice State\n  0 8 1 active /dev/sda\n", 3),
    ],
)
def test_it_names_the_unreadable_line(text, line_number):
    with pytest.raises(ParseError) as error:
        parse(text)
    assert error.value.line_number == line_number
    assert f"line {line_number}:" in str(error.value)


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(TEXTS))
def test_it_raises_nothing_but_parse_error_on_damaged_samples(text):
    try:
        result = parse(text)
    except ParseError:
        return
    assert result.as_dict()["device"] == result.device

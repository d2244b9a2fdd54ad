"""What both RAID parsers promise (apps/raid/errors.py): every published sample read to its
expected facts, messy white space read the same, and on anything else nothing but a
``ParseError`` that names and quotes the line, for hand-made bad lines and damaged samples;
in /proc/mdstat, one array's odd line is that array's ``unreadable``, naming and quoting it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.raid import parse_mdadm, parse_mdstat
from apps.raid.errors import ParseError
from tests.helpers import SHARED_FIXTURES
from tests.raid.mutations import mutated

PARSERS: dict[str, Callable] = {"mdstat": parse_mdstat.parse, "mdadm-detail": parse_mdadm.parse}
SAMPLES = {kind: sorted((SHARED_FIXTURES / kind).glob("*.txt")) for kind in PARSERS}
TEXTS = {kind: [p.read_text(encoding="utf-8") for p in paths] for kind, paths in SAMPLES.items()}
EACH_SAMPLE = [
    pytest.param(kind, path, id=f"{kind}-{path.stem}")
    for kind, paths in SAMPLES.items()
    for path in paths
]
#: How each output may come back from a terminal or another system: indentation as tabs.
MESSY = {
    "mdstat": lambda line: "\t" + line.strip() if line.strip() else line,
    "mdadm-detail": lambda line: line.replace("    ", "\t"),
}
#: What the parsed result must agree with itself on, whatever the input.
CONSISTENT = {
    "mdstat": lambda result: result.as_dict()["array_count"] == len(result.arrays),
    "mdadm-detail": lambda result: result.as_dict()["device"] == result.device,
}

#: Hand-made bad input, and the line each parser must name.
UNREADABLE = {
    "mdstat": [
        ("", 1),
        ("md0 : active raid1 sda[0]\n", 1),
        ("Personalities : [raid1]\n      1024 blocks [2/2] [UU]\n", 2),
        ("Personalities : [raid1]\nunused devices: <none>\nmd0 : active raid1 sda[0]\n", 3),
        ("Personalities : [raid1]\nmd0 : active raid1 sda[0]\nmd0 : active raid1 sdb[0]\n", 3),
    ],
    "mdadm-detail": [
        ("", 1),
        ("        Version : 1.2\n", 1),
        ("/dev/md0:\n   Raid Devices : two\n", 2),
        ("/dev/md0:\n     Array Size : big\n", 2),
        ("/dev/md0:\n          State : clean\n          State : active\n", 3),
        ("/dev/md0:\n Rebuild Status : almost\n", 2),
        ("/dev/md0:\nthis is not mdadm\n", 2),
        ("/dev/md0:\n    Number   Major   Minor   RaidDevice State\n  0 8 1 active /dev/sda\n", 3),
    ],
}


#: One array's odd line in /proc/mdstat: (the array's lines, the line named, the problem).
ODD_ARRAY = [
    ("md0 : active raid1 sda[0] sdb\n", 4, "unreadable member 'sdb'"),
    ("md0 : active raid1 sda[0]\n  1024 blocks [2/2] [U]\n", 5, "the [U_] string does not match"),
    ("md0 : active raid1 sda[0]\n  1024 blocks wibble\n", 5, "unreadable status text 'wibble'"),
    ("md0 : active raid1 sda[0]\n  resync = lots\n", 5, "unreadable line"),
    ("md0 : degraded raid1 sda[0]\n", 4, "state 'degraded' is not one Vigil knows"),
    ("md0 : active raid7 sda[0]\n", 4, "unknown level 'raid7'"),
    ("md0 ; active raid1 sda[0]\n  1024 blocks [1/1] [U]\n", 4, "unreadable array header"),
    ("md0 : active raid1 sda[0]\n  1024 blocks [1/1] [U]\n  bitmap: most\n", 6, "unreadable line"),
    (
        "md0 : active raid1 sda[0]\n  [=>...]  rectify = 1.0% (1/100)\n",
        5,
        "unknown sync action 'rectify'",
    ),
]


def expected(sample: Path) -> dict:
    return json.loads(sample.with_name(f"{sample.stem}.expected.json").read_text())["expected"]


@pytest.mark.parametrize(("kind", "least"), [("mdstat", 23), ("mdadm-detail", 11)])
def test_it_finds_the_samples(kind, least):
    assert len(SAMPLES[kind]) >= least


@pytest.mark.parametrize(("kind", "sample"), EACH_SAMPLE)
def test_it_reads_every_sample_to_its_expected_facts(kind, sample):
    facts = PARSERS[kind](sample.read_text(encoding="utf-8")).as_dict()
    # json.dumps keeps key order and tells 17 from 17.0, so types and order must match too.
    assert json.dumps(facts) == json.dumps(expected(sample))


@pytest.mark.parametrize(("kind", "sample"), EACH_SAMPLE)
def test_it_reads_the_sample_the_same_with_tabs_and_crlf(kind, sample):
    text = sample.read_text(encoding="utf-8")
    messy = "\r\n".join(MESSY[kind](line) for line in text.split("\n"))
    assert PARSERS[kind](messy).as_dict() == expected(sample)


@pytest.mark.parametrize(
    ("kind", "text", "line_number"),
    [(kind, text, line) for kind, cases in UNREADABLE.items() for text, line in cases],
)
def test_it_names_and_quotes_the_unreadable_line(kind, text, line_number):
    with pytest.raises(ParseError) as error:
        PARSERS[kind](text)
    assert error.value.line_number == line_number
    assert f"line {line_number}:" in str(error.value)
    assert repr(text.split("\n")[line_number - 1]) in str(error.value)


@pytest.mark.parametrize(("lines", "line_number", "problem"), ODD_ARRAY)
def test_one_arrays_odd_line_is_that_arrays_and_the_others_are_read(lines, line_number, problem):
    healthy = "md9 : active raid1 sdy[1] sdx[0]\n      1024 blocks super 1.2 [2/2] [UU]\n"
    text = f"Personalities : [raid1]\n{healthy}{lines}unused devices: <none>\n"
    odd, fine = parse_mdstat.parse(text).arrays[::-1]
    assert (odd.name, fine.name, fine.unreadable) == ("md0", "md9", None)
    assert fine.status == "UU" and fine.blocks == 1024
    assert odd.unreadable.startswith(f"line {line_number}: {problem}")
    assert odd.unreadable.endswith(repr(text.split("\n")[line_number - 1]))


@pytest.mark.slow
@pytest.mark.parametrize("kind", PARSERS)
@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_it_raises_nothing_but_parse_error_on_damaged_samples(kind, data):
    text = data.draw(mutated(TEXTS[kind]), label="damaged sample")
    try:
        result = PARSERS[kind](text)
    except ParseError:
        return
    assert CONSISTENT[kind](result)

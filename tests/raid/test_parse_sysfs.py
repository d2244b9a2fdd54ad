"""The sysfs words a host sends (``grep -s . /sys/block/mdX/md/...``): read when they are
what grep prints, left out otherwise, never an error."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.raid import bounds
from apps.raid.parse_sysfs import MAX_LINES, SysfsState, parse


def test_it_reads_what_grep_prints_for_each_array():
    text = (
        "/sys/block/md0/md/array_state:clean\n"
        "/sys/block/md0/md/sync_action:repair\n"
        "/sys/block/md127/md/array_state:broken\r\n"
    )
    assert parse(text) == {
        "md0": SysfsState(array_state="clean", sync_action="repair"),
        "md127": SysfsState(array_state="broken"),
    }


def test_it_keeps_only_the_arrays_of_the_report_and_the_first_word_of_each_file():
    text = (
        "/sys/block/md0/md/sync_action:check\n"
        "/sys/block/md0/md/sync_action:repair\n"
        "/sys/block/md9/md/array_state:broken\n"
    )
    assert parse(text, known={"md0", "md1"}) == {"md0": SysfsState(sync_action="check")}


def test_what_is_not_one_short_word_in_a_known_file_is_left_out():
    text = "\n".join(
        [
            "/sys/block/md0/md/array_state:" + "x" * 21,  # longer than the column
            "/sys/block/md0/md/array_state:Clean",
            "/sys/block/md0/md/array_state:clean now",
            "/sys/block/md0/md/array_state:\x00",
            "/sys/block/md0/md/degraded:1",  # a file Vigil does not ask for
            "/sys/block/../md/array_state:clean",
            "grep: /sys/block/md0/md/sync_action: No such file or directory",
            "/sys/block/md0/md/sync_action:idle",
        ]
    )
    assert parse(text) == {"md0": SysfsState(sync_action="idle")}


def test_nothing_sent_is_nothing_known():
    assert parse(None) == parse("") == {}


def test_it_reads_at_most_its_bound_of_lines_in_one_pass():
    lines = [f"/sys/block/md{i}/md/array_state:clean" for i in range(MAX_LINES + 10)]
    found = parse("\n".join(lines) + "\n" + "x" * 1_000_000)
    assert len(found) == MAX_LINES == 8 * bounds.MAX_ARRAYS  # two lines for each of 4 files


@pytest.mark.slow  # over 1 s of CPU alone (docs/testing.md)
@settings(max_examples=200)
@given(st.text(alphabet=st.sampled_from(list("/sysblockmd0_:arrayte9\n\r\x00 é-")), max_size=300))
def test_any_text_is_read_into_short_words_or_left_out(text):
    for name, state in parse(text).items():
        assert name.isascii() and 1 <= len(name) <= bounds.MAX_NAME
        for word in (state.array_state, state.sync_action, state.last_sync_action):
            assert word is None or (word.isascii() and 1 <= len(word) <= 20 and word.islower())
        assert state.mismatch_cnt is None or 0 <= state.mismatch_cnt <= bounds.MAX_BIGINT

"""Scrubs followed from report to report: when the last check ended, what it found, its age."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from apps.raid.parse_sysfs import SysfsState
from apps.raid.scrub import ScrubMemory, ScrubThresholds, follow

T0 = datetime(2026, 10, 1, 1, 0, tzinfo=UTC)
LIMITS = ScrubThresholds(max_days=40, mismatch_sectors=1)


def state(action: str, last: str = "check", mismatches: int | None = 0) -> SysfsState:
    return SysfsState("clean", action, last, mismatches)


def test_a_check_that_ran_and_ended_is_dated_at_the_reading_that_saw_it_end():
    first = follow(ScrubMemory(), state("idle", "resync"), T0, LIMITS)
    assert first.text == "no check seen since 2026-10-01"
    running = follow(first.memory, state("check", "resync"), T0 + timedelta(hours=1), LIMITS)
    assert running.text == "check running" and running.status.value == "ok"
    done = follow(running.memory, state("idle"), T0 + timedelta(hours=7), LIMITS)
    assert done.memory.check_ended == T0 + timedelta(hours=7)
    assert done.text == "last check ended 2026-10-01 (~1 min ago), mismatch_cnt 0"
    later = follow(done.memory, state("idle"), T0 + timedelta(days=6), LIMITS)
    assert later.text == "last check ended 2026-10-01 (~6 d ago), mismatch_cnt 0"
    assert later.status.value == "ok"


def test_a_check_between_two_readings_is_seen_by_last_sync_action():
    first = follow(ScrubMemory(), state("idle", "resync"), T0, LIMITS)
    done = follow(first.memory, state("idle", "check"), T0 + timedelta(minutes=5), LIMITS)
    assert done.memory.check_ended == T0 + timedelta(minutes=5)


def test_the_first_reading_does_not_date_a_check_it_did_not_see():
    first = follow(ScrubMemory(), state("idle", "check"), T0, LIMITS)
    assert first.memory.check_ended is None
    assert first.text == "last check ended before 2026-10-01, mismatch_cnt 0"


def test_mismatches_after_a_check_are_a_warning_and_after_a_repair_are_not():
    found = follow(ScrubMemory(), state("idle", "check", 128), T0, LIMITS)
    assert found.status.value == "warning"
    assert found.findings[0].startswith("the last check found 128 sectors out of step")
    repaired = follow(ScrubMemory(), state("idle", "repair", 128), T0, LIMITS)
    assert repaired.status.value == "ok"
    off = follow(ScrubMemory(), state("idle", "check", 128), T0, ScrubThresholds(40, 0))
    assert off.status.value == "ok"


def test_no_check_for_longer_than_the_setting_is_a_warning():
    watched = follow(ScrubMemory(), state("idle", "resync"), T0, LIMITS).memory
    day_40 = follow(watched, state("idle", "resync"), T0 + timedelta(days=40), LIMITS)
    assert day_40.status.value == "ok"
    day_41 = follow(watched, state("idle", "resync"), T0 + timedelta(days=41), LIMITS)
    assert day_41.findings == (
        "no check seen for 41 days (Vigil has read its sync_action since 2026-10-01)",
    )
    checked = ScrubMemory("idle", "check", T0, "check", T0)
    old = follow(checked, state("idle"), T0 + timedelta(days=45), LIMITS)
    assert old.findings == ("no check for 45 days (the last ended 2026-10-01)",)
    never = follow(checked, state("idle"), T0 + timedelta(days=45), ScrubThresholds(0, 1))
    assert never.status.value == "ok"


def test_an_array_without_sync_action_is_not_judged_and_its_memory_kept():
    memory = ScrubMemory("idle", "check", T0, "check", T0)
    raid0 = follow(memory, SysfsState("clean"), T0 + timedelta(days=90), LIMITS)
    assert (raid0.judged, raid0.status.value, raid0.memory) == (False, "ok", memory)

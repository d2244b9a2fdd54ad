"""The one mechanism of thresholds per subject and per region (apps/lib/thresholds.py)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from apps.lib.thresholds import Level, Notes, Spec, check, resolve, rows

SPECS = (
    Spec("queue", "Queue above", "write-sets", 0, 1000),
    Spec("days", "Older than", "days", 0, 365, whole=True),
    Spec("low", "Low", "%", 0, 100, at_most="queue"),
)


@dataclass(frozen=True)
class Th:
    queue: float = 10.0
    days: int = 40
    low: float = 5.0
    notes: Notes = Notes()


def test_the_subject_wins_over_the_region_which_wins_over_the_default():
    got = resolve(SPECS, Th(), {"queue": 20, "days": 7}, {"queue": 30}, noun="cluster",
                  region_label="eu-west-1")  # fmt: skip
    assert (got.queue, got.days, got.low) == (30, 7, 5.0)
    assert got.notes("queue") == "this cluster's threshold; default 10 write-sets"
    assert got.notes.suffix("days") == " (eu-west-1's threshold; default 40 days)"
    assert got.notes("low") == ""
    table = {r.spec.name: r for r in rows(SPECS, Th(), {"queue": 20}, {"queue": 30})}
    assert table["queue"].level is Level.SUBJECT and table["queue"].value == 30
    assert table["days"].level is Level.DEFAULT and table["days"].value == 40


def test_nothing_set_is_the_base_itself():
    base = Th()
    assert resolve(SPECS, base, {}, {}, noun="x", region_label="y") is base


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ([1], "Give an object"),
        ({"nope": 1}, "No threshold 'nope'"),
        ({"queue": True}, "give a number"),
        ({"days": 1.5}, "whole number"),
        ({"queue": 2000}, "between 0 and 1000 write-sets"),
        ({"queue": 1, "low": 2}, "low must not be above queue"),
    ],
)
def test_bad_thresholds_are_refused_in_words(given, words):
    with pytest.raises(ValueError, match=words):
        check(SPECS, given)


def test_good_ones_are_numbers():
    assert check(SPECS, {"queue": 5, "days": 3}) == {"queue": 5.0, "days": 3.0}
    assert check(SPECS, None) == {}


@dataclass(frozen=True)
class Part:
    limit: int = 1
    notes: Notes = Notes()


@dataclass(frozen=True)
class Whole:
    part: Part = Part()
    other: Part = Part()


def test_a_field_may_be_a_path_into_a_part_which_gets_the_notes():
    specs = (Spec("limit", "Limit", "sectors", 0, 100, whole=True, field="part.limit"),)
    got = resolve(specs, Whole(), {"limit": 5}, {}, noun="array", region_label="lab")
    assert got.part.limit == 5 and got.other == Part()
    assert got.part.notes("limit") == "lab's threshold; default 1 sectors"

"""apps/lib/stopwatch.py: wall and CPU seconds per part of a run, parts never overlapping."""

from __future__ import annotations

import pytest

from apps.lib.stopwatch import Stopwatch


class Clock:
    """A clock the test moves by hand: (wall, cpu)."""

    def __init__(self) -> None:
        self.now = (0.0, 0.0)

    def __call__(self) -> tuple[float, float]:
        return self.now

    def advance(self, wall: float, cpu: float) -> None:
        self.now = (self.now[0] + wall, self.now[1] + cpu)


def test_it_counts_each_part_and_the_rest_as_other():
    clock = Clock()
    watch = Stopwatch(clock)
    with watch.part("fetch"):
        clock.advance(3.0, 0.5)
    clock.advance(1.0, 1.0)
    with watch.part("save"):
        clock.advance(2.0, 1.0)
    with watch.part("fetch"):
        clock.advance(1.0, 0.25)
    assert watch.split() == {
        "fetch": {"wall": 4.0, "cpu": 0.75},
        "save": {"wall": 2.0, "cpu": 1.0},
        "other": {"wall": 1.0, "cpu": 1.0},
    }


def test_it_counts_a_nested_part_there_and_not_in_the_part_around_it():
    clock = Clock()
    watch = Stopwatch(clock)
    with watch.part("collect"):
        clock.advance(1.0, 1.0)
        with watch.part("fetch"):
            clock.advance(5.0, 0.5)
            with watch.part("parse"):
                clock.advance(2.0, 2.0)
        clock.advance(1.0, 1.0)
    split = watch.split()
    assert split["collect"] == {"wall": 2.0, "cpu": 2.0}
    assert split["fetch"] == {"wall": 5.0, "cpu": 0.5}
    assert split["parse"] == {"wall": 2.0, "cpu": 2.0}
    assert split["other"] == {"wall": 0.0, "cpu": 0.0}


def test_it_counts_a_part_that_raised():
    clock = Clock()
    watch = Stopwatch(clock)
    with pytest.raises(RuntimeError), watch.part("fetch"):
        clock.advance(1.5, 0.5)
        raise RuntimeError("throttled")
    assert watch.split()["fetch"] == {"wall": 1.5, "cpu": 0.5}

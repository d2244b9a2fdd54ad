"""Where a run's time goes: wall and CPU seconds per named part.

A task wraps its steps in ``stopwatch.part("fetch")`` and returns ``stopwatch.split()`` with
its result, so the benchmark (and anyone reading a task's result) sees the split of every
run, at the cost of two clock reads a part. Parts may nest: the time of an inner part is
counted there and not in the part around it, so the parts never overlap and "other" is the
rest of the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

OTHER = "other"


def clocks() -> tuple[float, float]:
    """Wall and CPU seconds now (CPU of the whole process, every thread)."""
    return time.perf_counter(), time.process_time()


class Stopwatch:
    def __init__(self, clock: Callable[[], tuple[float, float]] = clocks) -> None:
        self._clock = clock
        self._started = clock()
        self._spent: dict[str, list[float]] = {}
        self._inner: list[list[float]] = []  # per open part: time of the parts inside it

    @contextmanager
    def part(self, name: str) -> Iterator[None]:
        wall, cpu = self._clock()
        inner = [0.0, 0.0]
        self._inner.append(inner)
        try:
            yield
        finally:
            self._inner.pop()
            now = self._clock()
            took = (now[0] - wall, now[1] - cpu)
            spent = self._spent.setdefault(name, [0.0, 0.0])
            spent[0] += took[0] - inner[0]
            spent[1] += took[1] - inner[1]
            if self._inner:
                self._inner[-1][0] += took[0]
                self._inner[-1][1] += took[1]

    def split(self) -> dict[str, dict[str, float]]:
        """``{part: {"wall": seconds, "cpu": seconds}}`` since the stopwatch started, the time
        outside every part as ``"other"``."""
        now = self._clock()
        wall, cpu = now[0] - self._started[0], now[1] - self._started[1]
        out = {name: {"wall": w, "cpu": c} for name, (w, c) in self._spent.items()}
        outside = {
            "wall": wall - sum(w for w, _ in self._spent.values()),
            "cpu": cpu - sum(c for _, c in self._spent.values()),
        }
        out[OTHER] = {k: max(0.0, v) for k, v in outside.items()}
        return out

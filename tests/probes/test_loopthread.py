"""An async generator consumed from synchronous code, its loop on a helper thread."""

from __future__ import annotations

import asyncio
import threading
from contextlib import closing

import pytest

from apps.probes.loopthread import iterate_in_thread


def test_it_yields_items_in_the_callers_thread_as_they_come():
    caller = threading.get_ident()
    seen = []

    async def items():
        for i in range(3):
            await asyncio.sleep(0)
            yield i, threading.get_ident()

    for i, producer in iterate_in_thread(items):
        seen.append((i, threading.get_ident() == caller, producer != caller))

    assert seen == [(0, True, True), (1, True, True), (2, True, True)]


def test_it_raises_the_generators_error_in_the_caller():
    async def broken():
        yield 1
        raise ValueError("bad")

    with pytest.raises(ValueError, match="bad"):
        list(iterate_in_thread(broken))


def test_leaving_early_cancels_the_generator_and_runs_its_clean_up():
    cleaned = threading.Event()

    async def endless():
        try:
            while True:
                yield "tick"
                await asyncio.sleep(0.01)
        finally:
            cleaned.set()

    with pytest.raises(RuntimeError), closing(iterate_in_thread(endless)) as ticks:
        for _ in ticks:
            raise RuntimeError("the consumer failed")

    assert cleaned.is_set()

"""Consume an async generator from synchronous code: its event loop runs on a helper thread.

The probe task saves each result through Django's synchronous ORM as soon as the probe
finishes. Running the ORM inside the event loop is refused by Django (and would stall every
other probe while it waits for the database), and ``sync_to_async`` would save from another
thread with another database connection. Here the loop does only network I/O on its own
thread, and the items come back to the caller's thread: the task's own connection, its own
transaction in tests, and Celery's usual connection handling.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

_ITEM, _ERROR, _END = "item", "error", "end"


def iterate_in_thread(
    make: Callable[[], AsyncIterator[T]], *, name: str = "asyncio-loop"
) -> Iterator[T]:
    """Yield the items of ``make()`` as they come; the generator runs in ``asyncio.run``.

    Leaving early (an exception while handling an item, a time limit, ``close()``) cancels
    the async generator and waits for its clean-up. Wrap the call in ``contextlib.closing``
    so that this happens at once rather than when the iterator is garbage-collected.
    """
    items: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
    ready = threading.Event()
    state: dict[str, Any] = {}

    async def pump() -> None:
        state["loop"], state["task"] = asyncio.get_running_loop(), asyncio.current_task()
        ready.set()
        try:
            async for item in make():
                items.put((_ITEM, item))
        except asyncio.CancelledError:
            pass  # the consumer left: make()'s own finally blocks have run
        except BaseException as exc:  # handed to the consumer's thread
            items.put((_ERROR, exc))

    def run() -> None:
        try:
            asyncio.run(pump())
        finally:
            ready.set()
            items.put((_END, None))

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    try:
        while True:
            kind, value = items.get()
            if kind == _END:
                return
            if kind == _ERROR:
                raise value
            yield value
    finally:
        if thread.is_alive():
            ready.wait()
            loop, task = state.get("loop"), state.get("task")
            if loop is not None and task is not None:
                with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                    loop.call_soon_threadsafe(task.cancel)
            thread.join()

"""Demo work that ``make run`` repeats while it runs in demo mode: a concern's ``demo_runtime``
(``apps/regions/concerns.py``) returns ``repeating(...)`` for what its demo subjects would do on
their own (EFS's NFS clients push, RAID's demo host reports), so no production task asks
whether the demo is on.

Only the demo's pieces use it, from here below the concerns (docs/architecture.md, "Imports
point down")."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator

from django.db import close_old_connections

log = logging.getLogger(__name__)


@contextlib.contextmanager
def repeating(name: str, interval_s: float, work: Callable[[], object]) -> Iterator[None]:
    """``work()`` at once, then every ``interval_s`` seconds, in a thread named ``name`` while
    held open; a failure is logged and the next round comes (a demo must not take make run
    down)."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                work()
            except Exception:
                log.exception("Demo work %s failed", name)
            finally:
                close_old_connections()
            stop.wait(interval_s)

    thread = threading.Thread(target=loop, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)

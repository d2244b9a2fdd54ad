"""Bounds on "try it now" in a web request ("Measure once" of a probe target, "Try" of a RAID
host's SSH): each holds a web thread for up to its cap (20 s), so a dozen parallel clicks would
hold every thread of a small deployment.

One trial per user at a time, and at most ``VIGIL_TRIALS_AT_ONCE`` for everyone together, as
slots in Django's cache (Redis in production, shared by every web process): ``cache.add`` takes
a slot only if it is free, and the slot is given back when the trial ends, or expires after
``HOLD_S`` if its process died. A trial past either bound is answered 429 with ``Retry-After``,
naming which bound, and nothing is tried.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.core.cache import cache

log = logging.getLogger(__name__)

HOLD_S = 60  # longer than any trial (a 20 s cap, a 10 s timeout, TLS and DNS)
RETRY_AFTER_S = 5
PREFIX = "vigil:trial"


@contextmanager
def slot(user_id: object) -> Iterator[str | None]:
    """Yields None while the trial may run (its slots held), else why it may not."""
    token = uuid.uuid4().hex
    mine = f"{PREFIX}:user:{user_id}"
    taken: list[str] = []
    try:
        if not cache.add(mine, token, HOLD_S):
            yield "Your previous measurement is still running: wait for it, then try again."
            return
        taken.append(mine)
        shared = next(
            (
                key
                for n in range(settings.VIGIL_TRIALS_AT_ONCE)
                if cache.add(key := f"{PREFIX}:slot:{n}", token, HOLD_S)
            ),
            None,
        )
        if shared is None:
            yield (
                f"{settings.VIGIL_TRIALS_AT_ONCE} measurements are running for other people "
                "(VIGIL_TRIALS_AT_ONCE): try again in a few seconds."
            )
            return
        taken.append(shared)
        yield None
    finally:
        for key in taken:
            if cache.get(key) == token:  # not one that expired and was taken since
                cache.delete(key)

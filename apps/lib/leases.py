"""A lease on a row, so the same subject is never collected twice at once.

The lease is a nullable ``lease_until`` column on the subject's own table, taken by
compare-and-set (healthchecks' pattern): the UPDATE that moves an expired lease forward
succeeds for exactly one worker, on any database. A worker that dies holding a lease loses it
when it expires, so nothing stays locked for ever.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.db import models
from django.db.models import Q
from django.utils import timezone


def acquire(model: type[models.Model], pk: object, ttl: timedelta) -> bool:
    now = timezone.now()
    free = Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    return model._default_manager.filter(free, pk=pk).update(lease_until=now + ttl) == 1


def release(model: type[models.Model], pk: object) -> None:
    model._default_manager.filter(pk=pk).update(lease_until=None)


@contextmanager
def lease(model: type[models.Model], pk: object, ttl: timedelta) -> Iterator[bool]:
    """``with lease(Account, pk, ttl) as held:`` — do the work only when ``held``."""
    held = acquire(model, pk, ttl)
    try:
        yield held
    finally:
        if held:
            release(model, pk)

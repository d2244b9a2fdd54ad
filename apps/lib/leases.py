"""A lease on a row, so the same subject is never collected twice at once.

The lease is a nullable ``lease_until`` column on the subject's own table, taken by
compare-and-set (healthchecks' pattern): the UPDATE that moves an expired lease forward
succeeds for exactly one worker, on any database. A worker that dies holding a lease loses it
when it expires, so nothing stays locked for ever.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.db import models
from django.db.models import Q
from django.utils import timezone


def acquire(model: type[models.Model], pk: object, ttl: timedelta) -> datetime | None:
    """Take the row's lease; the lease's end (the holder's token for ``release``) or None."""
    now = timezone.now()
    until = now + ttl
    free = Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    taken = model._default_manager.filter(free, pk=pk).update(lease_until=until) == 1
    return until if taken else None


def release(model: type[models.Model], pk: object, until: datetime) -> None:
    """Give the lease back, unless it expired and another worker holds it now."""
    model._default_manager.filter(pk=pk, lease_until=until).update(lease_until=None)


@contextmanager
def lease(model: type[models.Model], pk: object, ttl: timedelta) -> Iterator[bool]:
    """``with lease(Account, pk, ttl) as held:`` — do the work only when ``held``."""
    until = acquire(model, pk, ttl)
    try:
        yield until is not None
    finally:
        if until is not None:
            release(model, pk, until)


def claim_due(
    queryset: models.QuerySet,
    now: datetime,
    interval: timedelta | None = None,
    field: str = "next_due",
) -> list[object]:
    """Rows of ``queryset`` whose ``field`` time has come, each claimed by compare-and-set.

    Claiming moves the row's due time forward by ``interval`` (or by its own ``interval_s``
    seconds), so when two beat ticks or workers race, exactly one of them gets each row.
    """
    model = queryset.model
    columns = ["pk", field] if interval else ["pk", field, "interval_s"]
    claimed = []
    due = queryset.filter(**{f"{field}__lte": now}).order_by(field).values_list(*columns)
    for row in due:
        pk, when = row[0], row[1]
        step = interval or timedelta(seconds=row[2])
        won = model._default_manager.filter(pk=pk, **{field: when}).update(**{field: now + step})
        if won:
            claimed.append(pk)
    return claimed

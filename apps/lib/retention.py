"""Expiry of the grow-only history tables, in batches that never hold a long lock.

Each table keeps its rows for a setting's number of days (``HISTORY``); the beat's
``expire-history`` task (``apps.regions.tasks.expire_history``) calls ``expire_all`` hourly.
A batch finds the oldest ``VIGIL_HISTORY_EXPIRY_BATCH`` expired primary keys (an index scan
from the low end, where the old rows are) and deletes that primary-key range in its own short
transaction, so writers wait for one batch at most, never for the whole expiry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.apps import apps
from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet


@dataclass(frozen=True)
class History:
    model: str  # "app_label.Model"
    time_field: str
    days_setting: str
    keep: Callable[[], Q] = Q  # rows that stay whatever their age

    def expired(self, now: datetime) -> QuerySet:
        cutoff = now - timedelta(days=getattr(settings, self.days_setting))
        model = apps.get_model(self.model)
        return model._base_manager.filter(**{f"{self.time_field}__lt": cutoff}).exclude(self.keep())


def _unsettled_transitions() -> Q:
    incidents = apps.get_model("alerts.Incident").objects.values("last_transition")
    return Q(processed=None) | Q(pk__in=incidents)


HISTORY = (
    History("probes.Result", "created", "VIGIL_PROBES_RESULT_RETENTION_DAYS"),
    History("galera.Snapshot", "created", "VIGIL_GALERA_SNAPSHOT_RETENTION_DAYS"),
    History(
        "alerts.Notification",
        "sent",
        "VIGIL_ALERT_NOTIFICATION_RETENTION_DAYS",
        keep=lambda: ~Q(state="sent"),
    ),
    History(
        "alerts.Transition",
        "created",
        "VIGIL_ALERT_TRANSITION_RETENTION_DAYS",
        keep=_unsettled_transitions,
    ),
)


def expire(expired: QuerySet, batch: int) -> int:
    """Delete ``expired`` rows, oldest primary keys first, ``batch`` at a time; rows deleted."""
    deleted = 0
    while True:
        nth = list(expired.order_by("pk").values_list("pk", flat=True)[batch - 1 : batch])
        last = nth[0] if nth else None
        upto = expired.filter(pk__lte=last) if last is not None else expired
        with transaction.atomic():
            n, _ = upto.delete()
        deleted += n
        if last is None:
            return deleted


def expire_all(now: datetime) -> dict[str, int]:
    """Expire every table of ``HISTORY``; rows deleted per model (cascades included)."""
    batch = settings.VIGIL_HISTORY_EXPIRY_BATCH
    return {history.model: expire(history.expired(now), batch) for history in HISTORY}

"""Expiry of the grow-only history tables, in batches that never hold a long lock.

Each table keeps its rows for a setting's number of days (``HISTORY``); the beat's
``expire-history`` task (``apps.regions.tasks.expire_history``) calls ``expire_all`` hourly.
A batch finds the ``VIGIL_HISTORY_EXPIRY_BATCH``-th oldest expired row by its time and primary
key (an index scan from the old end) and deletes the rows up to it in its own short transaction
(row locks on old rows only, which nothing writes), so the expiry never holds a long lock.
Probe results and EFS minutes on PostgreSQL are partitioned by day instead: a day goes by
``DROP TABLE`` of its partition (``apps.lib.partitions``), and SQLite keeps the deletes (EFS
minutes there are deleted by the collection's hourly rollup, ``apps.efs.history.rollup``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.apps import apps
from django.conf import settings
from django.db import models, transaction
from django.db.models import Q, QuerySet
from django.utils.module_loading import import_string

from apps.lib import partitions


@dataclass(frozen=True)
class History:
    model: str  # "app_label.Model"
    time_field: str
    days_setting: str
    keep: Callable[[], Q] = Q  # rows that stay whatever their age
    #: Only when partitioned: on SQLite the rows go another way (EFS minutes: by the rollup).
    partitioned_only: bool = False
    #: Dotted path of ``f(cutoff) -> cutoff`` run before a partitioned table's rows go: it
    #: writes what they are summarised into, and returns the cutoff it did so up to.
    before_expiry: str = ""
    #: Rows that are monitored subjects (gone RAID arrays): their open incidents are closed
    #: as they go, so that no reminder is sent for a subject that no longer exists.
    closes_incidents: bool = False

    def cutoff(self, now: datetime) -> datetime:
        return now - timedelta(days=getattr(settings, self.days_setting))

    def expired(self, now: datetime) -> QuerySet:
        model = apps.get_model(self.model)
        return model._base_manager.filter(**{f"{self.time_field}__lt": self.cutoff(now)}).exclude(
            self.keep()
        )


def _unsettled_transitions() -> Q:
    incidents = apps.get_model("alerts.Incident").objects.values("last_transition")
    return Q(processed=None) | Q(pk__in=incidents)


HISTORY = (
    History("probes.Result", "created", "VIGIL_PROBES_RESULT_RETENTION_DAYS"),
    History(
        "efs.MetricMinute",
        "ts",
        "VIGIL_EFS_MINUTE_RETENTION_DAYS",
        partitioned_only=True,
        before_expiry="apps.efs.history.roll_up_before",
    ),
    History("galera.Snapshot", "created", "VIGIL_GALERA_SNAPSHOT_RETENTION_DAYS"),
    History("raid.DiskReading", "read_at", "VIGIL_RAID_DISK_RETENTION_DAYS"),
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


def expire(
    expired: QuerySet, batch: int, time_field: str = "pk", closing: datetime | None = None
) -> int:
    """Delete ``expired`` rows, oldest first by ``(time_field, pk)`` (an indexed order),
    ``batch`` at a time, each batch its own transaction; rows deleted. With ``closing`` (a
    time), the rows are subjects whose open incidents are closed then."""
    deleted = 0
    key = (time_field, "pk")
    while True:
        nth = list(expired.order_by(*key).values_list(time_field, flat=True)[batch - 1 : batch])
        # Up to that row's time, one index range (rows sharing it go in the same batch).
        upto = expired.filter(**{f"{time_field}__lte": nth[0]}) if nth else expired
        with transaction.atomic():
            if closing is not None:
                _close_incidents(upto, closing)
            deleted += _delete(upto)
        if not nth:
            return deleted


def _close_incidents(rows: QuerySet, now: datetime) -> None:
    """Close the open incidents of the subjects ``rows`` (their history stays)."""
    from django.contrib.contenttypes.models import ContentType

    incidents = apps.get_model("alerts.Incident")._base_manager.filter(
        content_type=ContentType.objects.get_for_model(rows.model),
        object_id__in=rows.values("pk"),
        closed=None,
    )
    incidents.update(closed=now, next_reminder=None)


def _delete(rows: QuerySet) -> int:
    """``DELETE ... WHERE`` in SQL, the rows' cascaded children first (one level: what points
    at history rows is a Notification at its Transition, a Member at its gone Array), and the
    links of rows that point at them with ``SET_NULL`` cleared (an array's parent). Not
    ``QuerySet.delete()``: with ``apps.lib.keep``'s ``pre_delete`` guard connected, Django
    would read every row into Python and delete them a hundred at a time."""
    for relation in rows.model._meta.related_objects:
        if relation.on_delete is models.SET_NULL and not relation.many_to_many:
            linked = relation.related_model._base_manager.filter(
                **{f"{relation.field.name}__in": rows.values("pk")}
            )
            linked.update(**{relation.field.name: None})
        elif relation.on_delete is models.CASCADE and not relation.many_to_many:
            children = relation.related_model._base_manager.filter(
                **{f"{relation.field.name}__in": rows.values("pk")}
            )
            children._raw_delete(children.db)
    return rows._raw_delete(rows.db)


def expire_all(now: datetime, extra: Iterable[History] = ()) -> dict[str, int]:
    """Expire every table of ``HISTORY`` and ``extra`` (the concerns' own: ``Concern.history``,
    ``apps.regions.concerns.histories``); rows deleted per model (cascades included).

    A table partitioned by day (probe results and EFS minutes on PostgreSQL,
    ``apps.lib.partitions``) loses whole days instead: its partitions are made ahead and
    dropped once past the retention."""
    batch = settings.VIGIL_HISTORY_EXPIRY_BATCH
    deleted = {}
    for history in (*HISTORY, *extra):
        model = apps.get_model(history.model)
        if partitions.partitioned(model):
            before = import_string(history.before_expiry) if history.before_expiry else None
            cutoff = history.cutoff(now)
            deleted[history.model] = partitions.maintain(model, cutoff, now, batch, before)
        elif not history.partitioned_only:
            closing = now if history.closes_incidents else None
            deleted[history.model] = expire(
                history.expired(now), batch, history.time_field, closing
            )
    return deleted

"""Write a subject's status change once, by compare-and-set (healthchecks' handle_going_down).

Two workers that judge the same subject at the same time may both see the old status; only
the one whose ``UPDATE … WHERE status = old`` changes a row writes the transition. The update,
the transition, its incident and its outbox rows are one transaction, so a crash never leaves a
changed status without its transition, nor a transition without its notifications. Delivery is
queued when the transaction commits, so the email leaves within seconds.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.utils import timezone

from apps.lib.status import Status, Verdict, jsonable
from apps.regions.models import Subject

from . import routing
from .models import Incident, Transition
from .tasks import send_alerts

log = logging.getLogger(__name__)


def wake_sender() -> None:
    """Ask a worker to deliver now. If the broker is down the periodic sweep delivers later."""
    try:
        send_alerts.delay()
    except Exception:  # noqa: BLE001 - any broker failure; the outbox row is already safe
        log.warning("Could not queue send_alerts; the next sweep will deliver", exc_info=True)


def record(subject: Subject, verdict: Verdict) -> Transition | None:
    model = type(subject)
    old = subject.status
    new = verdict.status.value
    if old == new:
        if subject.reason != verdict.reason:
            model.objects.filter(pk=subject.pk, status=old).update(reason=verdict.reason)
            subject.reason = verdict.reason
            if old != Status.OK:  # an open incident says why as the subject does, not as it was
                Incident.objects.filter(
                    content_type=ContentType.objects.get_for_model(model),
                    object_id=subject.pk,
                    closed=None,
                ).update(reason=verdict.reason)
        return None
    now = timezone.now()
    with transaction.atomic():
        won = model.objects.filter(pk=subject.pk, status=old).update(
            status=new, reason=verdict.reason, status_changed=now
        )
        if not won:
            subject.refresh_from_db(fields=["status", "reason", "status_changed"])
            return None
        created = Transition.objects.create(
            content_type=ContentType.objects.get_for_model(model),
            object_id=subject.pk,
            region_id=subject.region_id,
            concern=subject.concern or model._meta.app_label,
            subject_label=str(subject)[:255],
            old_status=old,
            new_status=new,
            reason=verdict.reason,
            figures=jsonable(verdict.figures),
            created=now,
        )
        if routing.on_transition(created, verdict.cause):
            transaction.on_commit(wake_sender)
    subject.status, subject.reason, subject.status_changed = new, verdict.reason, now
    return created


def record_many(judged: Iterable[tuple[Subject, Verdict]]) -> list[Transition]:
    """``record`` for many subjects at once (a region's file systems): the new reasons of
    those whose status stays are written in one batch, each with the same compare-and-set
    (``… WHERE id = … AND status = old``); status changes go through ``record`` one by one.
    The transitions written."""
    reasons: dict[type, list[tuple[str, int, str]]] = {}
    changed = []
    for subject, verdict in judged:
        if subject.status != verdict.status.value:
            changed.append((subject, verdict))
        elif subject.reason != verdict.reason:
            reasons.setdefault(type(subject), []).append(
                (verdict.reason, subject.pk, subject.status)
            )
            subject.reason = verdict.reason
    q = connection.ops.quote_name
    incidents = Incident._meta
    for model, rows in reasons.items():
        sql = (
            f"UPDATE {q(model._meta.db_table)} SET {q('reason')} = %s "
            f"WHERE {q(model._meta.pk.column)} = %s AND {q('status')} = %s"
        )
        # Open incidents follow (only subjects that are not ok can have one).
        open_sql = (
            f"UPDATE {q(incidents.db_table)} SET {q('reason')} = %s "
            f"WHERE {q('content_type_id')} = %s AND {q('object_id')} = %s "
            f"AND {q('closed')} IS NULL"
        )
        content_type = ContentType.objects.get_for_model(model).pk
        troubled = [(r, content_type, pk) for r, pk, status in rows if status != Status.OK]
        with connection.cursor() as cursor:
            cursor.executemany(sql, rows)
            if troubled:
                cursor.executemany(open_sql, troubled)
    return [moved for subject, verdict in changed if (moved := record(subject, verdict))]

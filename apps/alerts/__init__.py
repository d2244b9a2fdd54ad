"""Alerts: status transitions (written once), and later routing, the outbox and email."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from apps.lib.status import Verdict
    from apps.regions.models import Subject

    from .models import Transition


def record(subject: Subject, verdict: Verdict) -> Transition | None:
    """Save ``verdict`` as the subject's status; write a transition if the status changed."""
    # Imported on call: this package loads before the app registry, which the models need.
    from .transitions import record as _record

    return _record(subject, verdict)


def record_many(judged: Iterable[tuple[Subject, Verdict]]) -> list[Transition]:
    """``record`` for many subjects at once: unchanged statuses' new reasons in one batch."""
    # Imported on call: this package loads before the app registry, which the models need.
    from .transitions import record_many as _record_many

    return _record_many(judged)

"""Nothing with history vanishes by accident.

A model (``KeepsHistory``) with ``deletion_blockers()`` (what it holds, in words) and
``disable_hint`` (how to turn it off instead) is refused deletion while it holds any, before
anything is written: ``delete()`` raises ``HistoryKept`` (the API's 409), the admin lists the
reasons (``KeepHistoryAdmin``), and a ``pre_delete`` receiver refuses every other path
(querysets, cascades). ``allow_deleting_history()`` lifts it for code that means it
(``seed_fleet --replace``); the history itself is read-only in the admin (``HistoryAdmin``).
What users see: docs/sign-in.md, "Nothing vanishes by accident".
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_allowed: ContextVar[bool] = ContextVar("vigil_allow_deleting_history", default=False)


class HistoryKept(Exception):
    """Deleting this would lose history; the message says what, and what to do instead."""


def blockers(obj: Any) -> list[str]:
    method = getattr(obj, "deletion_blockers", None)
    return method() if method is not None and obj.pk is not None else []


def refusal(obj: Any) -> str | None:
    """The message refusing to delete ``obj``, or None when it may go."""
    held = blockers(obj)
    if not held:
        return None
    hint = getattr(obj, "disable_hint", "disable it")
    return (
        f"{obj._meta.verbose_name.capitalize()} {obj} was not deleted: it holds "
        f"{', '.join(held)}. To stop it, {hint} instead."
    )


@contextmanager
def allow_deleting_history() -> Iterator[None]:
    token = _allowed.set(True)
    try:
        yield
    finally:
        _allowed.reset(token)


def check(obj: Any) -> None:
    """Raise ``HistoryKept`` unless ``obj`` may be deleted (or ``allow_deleting_history``)."""
    message = None if _allowed.get() else refusal(obj)
    if message:
        raise HistoryKept(message)


class KeepsHistory:
    """A model mixin: ``delete()`` is refused while ``deletion_blockers()`` names anything."""

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        check(self)
        return super().delete(*args, **kwargs)  # type: ignore[misc]


def refuse_deleting_history(sender: type, instance: Any, **kwargs: Any) -> None:
    """``pre_delete`` receiver (connected in ``AccountsConfig.ready``)."""
    check(instance)


class KeepHistoryAdmin:
    """A ModelAdmin mixin: the delete page (and bulk delete) shows why it may not delete."""

    def get_deleted_objects(self, objs: Any, request: Any) -> tuple:
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        kept = [message for obj in objs if (message := refusal(obj))]
        if kept:  # say why, rather than that history (``HistoryAdmin``) may not be deleted
            perms_needed = set()
        return deleted, counts, perms_needed, [*protected, *kept]


class HistoryAdmin:
    """A ModelAdmin mixin for history (status changes, incidents, notifications, probe
    results, arrays): shown, never added, changed or deleted there. History goes only by its
    retention (``apps.lib.retention``); deleting it by hand would also empty what keeps a
    cluster or host from being deleted (``deletion_blockers``), with no audit entry."""

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False

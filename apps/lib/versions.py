"""Versions of tables in the shared cache (Redis), moved after every commit that wrote them.

A reader that kept something derived from a table (the API's file system list) reads the
table's version in a round trip it makes anyway, and knows without a database statement whether
anything was written since. ``watch(table)`` names a table; from then on every statement through
Django's database connections that writes it (``INSERT``, ``UPDATE``, ``DELETE``: a model's
``save()``, a queryset's ``update()``, ``bulk_create``, a deletion's cascade, raw SQL on Django's
cursor, in a web request, the admin, a Celery task or a management command) moves the version
once its transaction commits (``bump``: ``SET NX`` a fresh start, ``INCR``). A write Django does
not see (``psql`` by hand, a ``COPY`` on the driver's own cursor) calls ``wrote(table)``, or is
caught by the reader's own bound (``apps.api.conditional``: a few seconds).

Only a shared cache holds versions: with Django's in-memory cache (one per process) nothing is
bumped and readers ask the database every time.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from django.core.cache import cache
from django.db import connections
from django.db.backends.signals import connection_created
from django.db.transaction import get_connection

from apps.lib import cache as caches

log = logging.getLogger(__name__)

PREFIX = "vigil:version"
_watched: dict[str, re.Pattern[str]] = {}  # table -> how a statement names it
_READS = ("SELECT", "select")


def key(table: str) -> str:
    """The cache key of ``table``'s version."""
    return f"{PREFIX}:{table}"


def watch(table: str) -> None:
    """Move ``table``'s version after every commit that wrote it through Django."""
    if table in _watched:
        return
    _watched[table] = re.compile(rf"(?<!\w){re.escape(table)}(?!\w)")  # quoted or not
    connection_created.connect(install, dispatch_uid="vigil-versions")
    for connection in connections.all(initialized_only=True):  # opened before: this thread's
        install(connection=connection)


def install(sender: Any = None, connection: Any = None, **kwargs: Any) -> None:
    """``connection_created``: spot the connection's writes (first of its execute wrappers, so
    a ``connection.execute_wrapper()`` block that pops the last one leaves it in place)."""
    if spot_writes not in connection.execute_wrappers:
        connection.execute_wrappers.insert(0, spot_writes)


def spot_writes(execute: Any, sql: Any, params: Any, many: bool, context: dict) -> Any:
    result = execute(sql, params, many, context)
    if isinstance(sql, str) and not sql.lstrip().startswith(_READS):
        for table, names in _watched.items():
            if names.search(sql):
                _on_commit(context["connection"], table)
    return result


def wrote(table: str, using: str | None = None) -> None:
    """A write to ``table`` that Django's cursor did not carry: its version moves on commit."""
    _on_commit(get_connection(using), table)


class _Bump:
    """One transaction's bump of a table: registered once however many statements wrote it."""

    __slots__ = ("done", "table")

    def __init__(self, table: str) -> None:
        self.table = table
        self.done = False

    def __call__(self) -> None:
        self.done = True
        bump(self.table)


def _on_commit(connection: Any, table: str) -> None:
    if not caches.shared(cache):
        return
    if not connection.in_atomic_block:  # autocommit: the statement has committed (manual
        bump(table)  # transactions, which Vigil does not use: as soon as it is known)
        return
    pending = connection.__dict__.setdefault("vigil_bumps", {})
    waiting = pending.get(table)
    # Still to run on this transaction's commit (a rollback empties run_on_commit)?
    if (
        waiting is not None
        and not waiting.done
        and any(entry[1] is waiting for entry in connection.run_on_commit)
    ):
        return
    pending[table] = _Bump(table)
    connection.on_commit(pending[table])


def bump(table: str) -> None:
    """Move ``table``'s version now; the cache down: the readers' bound catches the write."""
    try:
        caches.bump(cache, key(table))
    except Exception as exc:
        log.warning("version of %s not moved: cache unavailable (%s)", table, type(exc).__name__)

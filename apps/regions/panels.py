"""What a concern's region panel reads: its subjects worst first, only the rows it shows, and
how many there are, ordered and counted by the database (docs/architecture.md, "Shared page
fragments")."""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.db.models import Count, Expression, F, Func, IntegerField, QuerySet
from django.db.models.expressions import Window
from django.db.models.functions import Collate

from apps.lib.status import Status


class Severity(Func):
    """``Status.severity`` of a status column, in SQL (unknown for a value it does not know):
    one ``CASE`` written as text, which Django compiles at once (four ``When`` lookups took
    longer to compile than the database took to run the query)."""

    template = (
        "CASE %(expressions)s "
        + " ".join(f"WHEN '{s.value}' THEN {s.severity}" for s in Status)
        + f" ELSE {Status.UNKNOWN.severity} END"
    )
    output_field = IntegerField()


def severity(field: str = "status") -> Severity:
    """The severity of the status in ``field``."""
    return Severity(F(field))


def as_python_sorts(text: Expression | str) -> Collate:
    """Text ordered by code point, as Python's ``sorted`` orders ``str`` (not by the database's
    locale): ``C`` on PostgreSQL, ``BINARY`` on SQLite."""
    expression = F(text) if isinstance(text, str) else text
    return Collate(expression, "C" if connection.vendor == "postgresql" else "BINARY")


def worst_first(
    subjects: QuerySet, rank: Expression, *order: Any, limit: int | None
) -> tuple[list[Any], int]:
    """The first ``limit`` of ``subjects`` (every one with None) by ``rank`` descending, then
    ``order``, and how many ``subjects`` there are: one query, the count a window over the rows
    before the limit."""
    ranked = subjects.annotate(panel_rank=rank, panel_total=Window(Count("pk"))).order_by(
        F("panel_rank").desc(), *order, "pk"
    )
    rows = list(ranked if limit is None else ranked[:limit])
    return rows, rows[0].panel_total if rows else 0

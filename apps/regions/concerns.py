"""The concerns (EFS, Galera, RAID, probes) as the home page and the beat tick see them.

Each concern app registers itself once, in its ``AppConfig.ready()``:

    concerns.register(Concern(
        "efs", "EFS",
        subjects=lambda: FileSystem.objects.all(),
        dispatch=tasks.dispatch_due,
        region_template="efs/region_panel.html",
        region_context=views.region_panel_context,
        demo_setup=demo.set_up,
    ))

- ``subjects`` returns a queryset of a ``regions.models.Subject`` subclass (a ``region``
  foreign key and a ``status``: the status contract in ARCHITECTURE.md);
- ``dispatch(now)`` queues the concern's due work; the beat tick calls it once a minute;
- ``region_template`` is rendered on the region page with ``region_context(region)`` as
  ``panel``, and alone at ``regions:panel`` (region, concern key) for htmx polling; the region
  page wraps it in the polling element (``regions/panel.html``, id ``<key>-panel-<region>``);
- ``region_errors(region_ids)`` returns ``{region_id: message}`` for regions whose collection
  is failing as a whole (one query), shown on their home tiles;
- ``demo_setup()`` adds the concern's demo subjects (demo mode only; must be idempotent);
- ``demo_runtime()`` returns a context manager that ``make run`` holds open in demo mode, for
  demo services that live in that process (the probes' loopback keep-alive servers);
- ``add_links`` are the concern's "add" pages (``AddLink``: a label, a URL name taking no
  argument, the permission it needs); the region page offers them, with ``?region=<pk>``, when
  the concern has nothing in a region yet;
- ``prometheus(subjects, statuses)`` yields the concern's metric families for ``/metrics``
  (the current figures of every subject in the ``subjects()`` queryset, with ``region``
  labels) and adds each subject's status to ``statuses`` (an
  ``apps.prometheus.families.SubjectStatuses``), in a constant number of queries.

The regions app needs no change when a concern is added.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, QuerySet


@dataclass(frozen=True)
class AddLink:
    label: str
    url_name: str
    permission: str
    aws_only: bool = False  # only offered in AWS regions (not on sites)


@dataclass(frozen=True)
class Concern:
    key: str
    label: str
    subjects: Callable[[], QuerySet]
    dispatch: Callable[[datetime], object] | None = None
    region_template: str = ""
    region_context: Callable[[Any], dict[str, Any]] | None = None
    demo_setup: Callable[[], object] | None = None
    region_errors: Callable[[list[int]], dict[int, str]] | None = None
    demo_runtime: Callable[[], AbstractContextManager[object]] | None = None
    prometheus: Callable[[QuerySet, Any], Iterable[Any]] | None = None
    add_links: tuple[AddLink, ...] = ()


_registry: dict[str, Concern] = {}


def register(concern: Concern) -> None:
    _registry[concern.key] = concern


def registered() -> list[Concern]:
    return list(_registry.values())


def region_errors(region_ids: Iterable[int]) -> dict[int, list[str]]:
    """``{region_id: ["EFS: AccessDenied: ...", ...]}``, one query per concern that has any."""
    ids = list(region_ids)
    errors: dict[int, list[str]] = defaultdict(list)
    for concern in registered():
        if concern.region_errors is not None:
            for region_id, message in concern.region_errors(ids).items():
                errors[region_id].append(f"{concern.label}: {message}")
    return errors


def status_counts(region_ids: Iterable[int]) -> dict[int, dict[str, Counter[str]]]:
    """``{region_id: {concern_key: Counter({status: n})}}``, one query per concern."""
    ids = list(region_ids)
    counts: dict[int, dict[str, Counter[str]]] = defaultdict(dict)
    for concern in registered():
        rows = (
            concern.subjects()
            .filter(region_id__in=ids)
            .values_list("region_id", "status")
            .annotate(n=Count("pk"))
            .order_by()
        )
        for region_id, status, n in rows:
            counts[region_id].setdefault(concern.key, Counter())[status] += n
    return counts

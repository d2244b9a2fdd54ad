"""The concern contract: what a monitored concern (EFS, Galera, RAID, probes) declares, once.

Each concern app registers itself in its ``AppConfig.ready()`` and nothing in ``config/`` names
it: URLs, API routes, queue, settings and beat tick are read from here, so a new concern needs
only ``INSTALLED_APPS`` (docs/architecture.md, "The concern contract"; fields: ``Concern``)::

    concerns.register(self, Concern(
        "efs", "EFS",
        subjects=lambda: FileSystem.objects.all(),
        dispatch=tasks.dispatch_due,
        region_template="efs/region_panel.html",
        region_context=views.region_panel_context,
        demo_setup=demo.set_up,
    ))
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import datetime
from importlib import import_module
from importlib.util import find_spec
from typing import Any

from django.apps import AppConfig
from django.core.checks import Error
from django.db.models import Case, Count, F, IntegerField, Q, QuerySet, Value, When, Window
from django.db.models.functions import RowNumber
from django.urls import include, path

from apps.lib.status import Status
from apps.lib.thresholds import ThresholdSet


@dataclass(frozen=True)
class AddLink:
    label: str
    url_name: str
    permission: str
    aws_only: bool = False  # only offered in AWS regions (not on sites)


@dataclass(frozen=True)
class Concern:
    """What a concern declares:

    - ``register(app_config, concern)`` records which app declared it (``Concern.app``); the
      concern's key must be the app's label (checked at start, ``regions.E101``...);
    - ``subjects`` returns a queryset of a ``regions.models.Subject`` subclass (a ``region``
      foreign key and a ``status``: the status contract in docs/architecture.md);
    - ``dispatch(now)`` queues the concern's due work and returns how many subjects it queued; the
      beat tick calls it once a minute. It is ``<app>.tasks.dispatch_due``, and every task of
      ``<app>.tasks`` goes to the concern's Celery queue (``queue``, the key by default;
      ``config/celery_app.py`` reads it from here);
    - the app's ``urls.py`` (``app_name`` = the key) is mounted at ``/<key>/`` by
      ``config/urls.py``, and its ``api.py``'s ``ROUTES`` (``(prefix, viewset, basename)``) and
      ``URLS`` (extra paths, such as a push endpoint) under ``/api/`` by ``config/api.py``;
    - the app's ``conf.py`` (read while the settings load) declares its ``VIGIL_*`` variables as
      ``SETTINGS`` (``apps.lib.appconf.Setting``); ``config/settings/base.py`` loads it for every
      installed app that has one;
    - ``region_template`` is rendered on the region page with ``region_context(region, limit)`` as
      ``panel``, and alone at ``regions:panel`` (region, concern key) for htmx polling; the region
      page wraps it in the polling element (``regions/panel.html``, id ``<key>-panel-<region>``).
      The context holds the region's first ``limit`` subjects worst first (all of them with None:
      ``?all=1``) and their number as ``total``, ordered, limited and counted by the database
      (``apps.regions.panels.worst_first``);
    - ``region_errors(region_ids)`` returns ``{region_id: message}`` for regions whose collection
      is failing as a whole (one query), shown on their home tiles;
    - ``demo_setup()`` adds the concern's demo subjects (demo mode only; must be idempotent);
    - ``demo_runtime()`` returns a context manager that ``make run`` holds open in demo mode, for
      demo services that live in that process (the probes' loopback keep-alive servers);
    - ``demo_aws()`` is called in the embedded AWS stand-in's process once it serves, to teach it
      the concern's demo data (EFS and EBS install their GetMetricData responders);
    - ``add_links`` are the concern's "add" pages (``AddLink``: a label, a URL name taking no
      argument, the permission it needs); the region page offers them, with ``?region=<pk>``, when
      the concern has nothing in a region yet;
    - ``prometheus(subjects, statuses)`` yields the concern's metric families for ``/metrics``
      (the current figures of every subject in the ``subjects()`` queryset, with ``region``
      labels) and adds each subject's status to ``statuses`` (an
      ``apps.prometheus.families.SubjectStatuses``), in a constant number of queries;
    - ``thresholds`` (``apps.lib.thresholds.ThresholdSet``) are the thresholds a region or one
      subject may set over the global defaults (``apps.regions.thresholds``: stored, resolved,
      shown and edited the same way for every concern);
    - ``history`` names the concern's grow-only tables (``apps.lib.retention.History``), expired
      hourly with the others by the beat's ``expire-history``;
    - ``aws_actions`` are the IAM actions its adapters call in a watched account (``(action,
      where)``): the policy shown at onboarding (``apps.regions.iam``) is the union of all;
    - ``seen_in_region(code, access)`` names what the concern finds in an AWS region with an
      account's access (EFS: its file systems), for the first run's "Test access"
      (``apps.regions.firstrun``); it may raise botocore's errors;
    - where concerns meet: ``aside_context(obj)`` says what the concern knows of another concern's
      object (a Galera cluster, a RAID host): a dict, or None when nothing, rendered with
      ``aside_template`` on that object's page by ``{% asides obj %}`` (``apps/regions/templatetags/
      asides.py``); ``notes(obj)`` gives short facts about the object's parts (``{part label:
      [text, ...]}``, a Galera node's label), which its own concern may weave into a reason. The
      dependency points from the concern that knows to the object's app, or through here: the
      object's app imports neither.
    """

    key: str
    label: str
    subjects: Callable[[], QuerySet]
    dispatch: Callable[[datetime], object] | None = None
    region_template: str = ""
    region_context: Callable[[Any, int | None], dict[str, Any]] | None = None
    demo_setup: Callable[[], object] | None = None
    region_errors: Callable[[list[int]], dict[int, str]] | None = None
    demo_runtime: Callable[[], AbstractContextManager[object]] | None = None
    demo_aws: Callable[[], object] | None = None
    prometheus: Callable[[QuerySet, Any], Iterable[Any]] | None = None
    add_links: tuple[AddLink, ...] = ()
    history: tuple[Any, ...] = ()  # apps.lib.retention.History of its grow-only tables
    thresholds: ThresholdSet | None = None  # what a region or a subject may set for itself
    aws_actions: tuple[tuple[str, str], ...] = ()  # (IAM action, where the call is made)
    seen_in_region: Callable[[str, Any], list[str]] | None = None  # (code, AccountAccess) -> names
    aside_template: str = ""
    aside_context: Callable[[Any], dict[str, Any] | None] | None = None
    notes: Callable[[Any], dict[str, list[str]]] | None = None
    queue: str = ""  # the Celery queue of <app>.tasks; the key when empty
    app: str = ""  # the declaring app's module ("apps.efs"), set by register()
    app_label: str = ""  # and its label ("efs")

    @property
    def queue_name(self) -> str:
        return self.queue or self.key

    @property
    def tasks_module(self) -> str:
        return f"{self.app}.tasks"

    @property
    def urls_module(self) -> str:
        return f"{self.app}.urls"

    @property
    def api_module(self) -> str:
        return f"{self.app}.api"


_registry: dict[str, Concern] = {}


def register(app_config: AppConfig, concern: Concern) -> None:
    """Register the concern ``app_config`` (the calling app) declares."""
    _registry[concern.key] = replace(concern, app=app_config.name, app_label=app_config.label)


def register_app(
    app_config: AppConfig, label: str, subjects: Callable[[], QuerySet], **fields: Any
) -> None:
    """Register a concern laid out in the shape of docs/architecture.md, from its modules:
    ``tasks.dispatch_due``, ``<key>/region_panel.html`` with ``views.region_panel_context``,
    ``prometheus.metrics`` and ``demo.set_up``; ``fields`` adds to or replaces any of them."""
    key, app = app_config.label, app_config.name
    tasks, views = _module(f"{app}.tasks"), _module(f"{app}.views")
    shape: dict[str, Any] = {
        "dispatch": tasks.dispatch_due,
        "region_template": f"{key}/region_panel.html",
        "region_context": views.region_panel_context,
        "prometheus": _module(f"{app}.prometheus").metrics,
        "demo_setup": _module(f"{app}.demo").set_up,
    }
    register(app_config, Concern(key, label, subjects=subjects, **(shape | fields)))


def registered() -> list[Concern]:
    return list(_registry.values())


def choices() -> list[tuple[str, str]]:
    """``[(key, label), ...]`` in registration order: every field that names a concern (a
    rule's, a silence's) offers these, with the labels the pages use ("Keep-alive", not
    "probes")."""
    return [(c.key, c.label) for c in _registry.values()]


def find(key: str) -> Concern | None:
    """The registered concern of ``key``, or None."""
    return _registry.get(key)


def label_of(key: str) -> str:
    """A concern's label; the key itself, upper-cased, for a concern no longer installed."""
    found = _registry.get(key)
    return found.label if found else key.upper()


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


def histories() -> list[Any]:
    """Every concern's grow-only tables (``Concern.history``), for ``apps.lib.retention``."""
    return [history for c in registered() for history in c.history]


def aws_actions() -> list[tuple[str, str]]:
    """Every concern's IAM actions (``Concern.aws_actions``), for the onboarding policy."""
    return [action for c in registered() for action in c.aws_actions]


def asides(obj: Any) -> list[tuple[str, dict[str, Any]]]:
    """``(template, context)`` of what each other concern knows of ``obj`` (its page shows
    them); a concern that knows nothing of it returns None and is left out."""
    own = getattr(obj, "concern", None) or obj._meta.app_label
    found = []
    for c in registered():
        if c.key == own or c.aside_context is None:
            continue
        context = c.aside_context(obj)
        if context is not None:
            found.append((c.aside_template, context))
    return found


def notes(obj: Any) -> dict[str, list[str]]:
    """``{part label: [text, ...]}``: what the other concerns know of ``obj``'s parts."""
    own = getattr(obj, "concern", None) or obj._meta.app_label
    merged: dict[str, list[str]] = defaultdict(list)
    for c in registered():
        if c.key != own and c.notes is not None:
            for part, texts in c.notes(obj).items():
                merged[part].extend(texts)
    return dict(merged)


#: A subject's reason until its first collection judges it (``regions.models.Subject``).
NOT_COLLECTED = "Not collected yet"


@dataclass
class Summary:
    """One concern in one region, for its home tile: its subjects counted by status, how many
    wait for their first collection, and the worst judged subject that is not ok (the worst
    status, then the longest in it), whose reason says why."""

    counts: Counter[str]
    waiting: int = 0
    worst: Any = None

    @property
    def collecting(self) -> bool:
        """Every subject is waiting for its first collection (a fresh start)."""
        return bool(self.waiting) and self.waiting == sum(self.counts.values())


def summaries(region_ids: Iterable[int]) -> dict[int, dict[str, Summary]]:
    """``{region_id: {concern_key: Summary}}``, two queries per concern: the counts, and the
    worst subject of each region (a window function, whatever the number of subjects)."""
    ids = list(region_ids)
    out: dict[int, dict[str, Summary]] = defaultdict(dict)
    waiting = Q(status="unknown", status_changed=None, reason=NOT_COLLECTED)
    rank = Case(
        *(When(status=s.value, then=Value(s.severity)) for s in Status),
        output_field=IntegerField(),
    )
    for concern in registered():
        subjects = concern.subjects()
        rows = (
            subjects.filter(region_id__in=ids)
            .values_list("region_id", "status")
            .annotate(n=Count("pk"), waiting=Count("pk", filter=waiting))
            .order_by()
        )
        for region_id, status, n, waits in rows:
            summary = out[region_id].setdefault(concern.key, Summary(Counter()))
            summary.counts[status] += n
            summary.waiting += waits
        worst = (
            subjects.filter(region_id__in=ids)
            .exclude(status="ok")
            .exclude(waiting)
            .annotate(
                place=Window(
                    RowNumber(),
                    partition_by=F("region_id"),
                    order_by=[rank.desc(), F("status_changed").asc(nulls_last=True), "pk"],
                )
            )
            .filter(place=1)
            .select_related()
        )
        for subject in worst:
            out[subject.region_id][concern.key].worst = subject
    return out


# --- what config/ reads ------------------------------------------------------------------------


def url_patterns() -> list[Any]:
    """``/<key>/`` -> each concern's ``urls.py`` (namespace: the key), for ``config/urls.py``."""
    return [path(f"{c.key}/", include(c.urls_module)) for c in registered() if _has(c.urls_module)]


def api_routes() -> list[tuple[str, Any, str]]:
    """Every concern's ``api.ROUTES``: ``(prefix, viewset, basename)`` for the API router."""
    return [
        route
        for c in registered()
        if _has(c.api_module)
        for route in getattr(_module(c.api_module), "ROUTES", ())
    ]


def api_urls() -> list[Any]:
    """Every concern's extra API paths (``api.URLS``: push endpoints), under ``/api/``."""
    return [
        url
        for c in registered()
        if _has(c.api_module)
        for url in getattr(_module(c.api_module), "URLS", ())
    ]


def task_queues() -> dict[str, str]:
    """``{tasks module: queue}`` of every concern (``apps.efs.tasks`` -> ``efs``)."""
    return {c.tasks_module: c.queue_name for c in registered()}


def _module(name: str) -> Any:
    return import_module(name)


def _has(name: str) -> bool:
    """Whether the module exists (a missing piece is the start-up check's to report)."""
    return find_spec(name) is not None


# --- the start-up check ------------------------------------------------------------------------

#: What every concern must declare (besides its key and label); checked at start.
REQUIRED = ("dispatch", "region_template", "region_context", "prometheus", "demo_setup")


def check(app_configs: Any = None, **kwargs: Any) -> list[Any]:
    """``manage.py check`` (and every start): each concern's keys agree and nothing is missing.

    The concern's key must be its app's label, its queue its own, its ``urls.py`` namespaced by
    the key, its dispatcher ``<app>.tasks.dispatch_due``, its ``api.py`` must list ``ROUTES``,
    and its ``conf.py`` (if any) must name only ``VIGIL_<KEY>_*`` variables.
    """
    errors: list[Any] = []

    def fail(concern: Concern, message: str, code: int) -> None:
        errors.append(
            Error(f"Concern {concern.key!r} ({concern.app}): {message}", id=f"regions.E{code}")
        )

    queues: dict[str, str] = {}
    for c in registered():
        if c.key != c.app_label:
            fail(c, f"its key must be its app's label {c.app_label!r}", 101)
        if c.queue_name in queues:
            fail(c, f"queue {c.queue_name!r} is also {queues[c.queue_name]!r}'s", 102)
        queues[c.queue_name] = c.key
        if not _has(c.urls_module):
            fail(c, f"no {c.urls_module}", 103)
        elif getattr(_module(c.urls_module), "app_name", None) != c.key:
            fail(c, f"{c.urls_module}.app_name must be {c.key!r}", 103)
        if not _has(c.tasks_module):
            fail(c, f"no {c.tasks_module}", 104)
        elif c.dispatch is not getattr(_module(c.tasks_module), "dispatch_due", None):
            fail(c, f"its dispatch must be {c.tasks_module}.dispatch_due", 104)
        if not _has(c.api_module) or not hasattr(_module(c.api_module), "ROUTES"):
            fail(c, f"{c.api_module} must list its ROUTES", 105)
        for piece in REQUIRED:
            if not getattr(c, piece):
                fail(c, f"it declares no {piece}", 106)
        if _has(f"{c.app}.conf"):
            prefix = f"VIGIL_{c.key.upper()}_"
            names = [s.name for s in _module(f"{c.app}.conf").SETTINGS]
            strays = [name for name in names if not name.startswith(prefix)]
            if strays:
                fail(c, f"conf.SETTINGS must start with {prefix}: {', '.join(strays)}", 107)
    return errors

"""Every registered concern has the same shape, and declares itself once (docs/architecture.md).

The tests' own concern (``tests/concern_app``, the "gadgets") is registered like a real one:
``config/settings/test.py`` installs it and nothing else in ``config/`` names it, yet its queue,
pages, API routes and settings are picked up.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from celery import Task
from django.apps import apps as django_apps
from django.conf import settings
from django.urls import get_resolver, reverse
from django.utils import timezone

from apps.regions import concerns
from apps.regions.models import Region
from tests.concern_app.models import Gadget
from tests.helpers import ROOT, eager_celery, parsed, statements

celery_module = importlib.import_module("config.celery_app")

CONCERNS = concerns.registered()
IDS = [c.key for c in CONCERNS]

#: The modules every concern has, whatever else it needs (docs/architecture.md).
REQUIRED_MODULES = (
    "apps",
    "models",
    "tasks",
    "collect",
    "verdict",
    "views",
    "urls",
    "api",
    "prometheus",
    "demo",
)
#: Names the roles above had before they were made the same everywhere.
OLD_NAMES = (
    "view", "health", "forecast", "queries", "ingest", "demo_setup", "efs_api", "configure",
)  # fmt: skip


def folder(concern: concerns.Concern) -> Path:
    return Path(importlib.import_module(concern.app).__file__).parent


def test_every_concern_app_is_registered():
    assert {"efs", "galera", "raid", "probes", "ebs", "gadgets"} <= set(IDS)


@pytest.mark.parametrize("concern", CONCERNS, ids=IDS)
def test_each_concern_has_the_modules_of_every_concern(concern):
    here = folder(concern)
    missing = [name for name in REQUIRED_MODULES if not (here / f"{name}.py").is_file()]
    assert not missing, f"{concern.app} has no {', '.join(missing)}"
    old = [name for name in OLD_NAMES if (here / f"{name}.py").exists()]
    assert not old, f"{concern.app}: rename {', '.join(old)} (see docs/architecture.md)"


@pytest.mark.parametrize("concern", CONCERNS, ids=IDS)
def test_each_parser_of_outside_text_is_named_parse(concern):
    for path in folder(concern).glob("*.py"):
        doc = ast.get_docstring(parsed(path)) or ""
        if re.match(r"Parse(r|s)?\b", doc):
            assert path.name.startswith("parse_"), f"{path} parses outside text"


@pytest.mark.parametrize("concern", CONCERNS, ids=IDS)
def test_tasks_hold_only_the_dispatcher_and_celery_tasks(concern):
    tasks = importlib.import_module(concern.tasks_module)
    functions = {
        name: value
        for name, value in vars(tasks).items()
        if callable(value)
        and getattr(value, "__module__", None) == concern.tasks_module
        and not name.startswith("_")
    }
    assert functions.pop("dispatch_due") is concern.dispatch
    others = [name for name, value in functions.items() if not isinstance(value, Task)]
    assert not others, f"{concern.tasks_module}: move {', '.join(others)} to collect.py"


@pytest.mark.django_db
@pytest.mark.parametrize("concern", CONCERNS, ids=IDS)
def test_each_dispatcher_returns_how_many_it_queued(concern):
    with eager_celery():
        assert concern.dispatch(timezone.now()) == 0


@pytest.mark.parametrize("concern", CONCERNS, ids=IDS)
def test_the_live_part_of_every_page_is_the_same_htmx_target(concern):
    views = (folder(concern) / "views.py").read_text()
    partials = set(re.findall(r'\.html#(\w+)"', views))
    if "subject_page(" in views:  # apps/lib/pages.py renders <page>.html#live
        partials.add("live")
    assert partials == {"live"}, f"{concern.app}/views.py renders partials {partials}"


@pytest.mark.parametrize("concern", CONCERNS, ids=IDS)
def test_subjects_are_addressed_by_id_in_pages_and_the_api(concern):
    urls = importlib.import_module(concern.urls_module)
    for pattern in urls.urlpatterns:
        first = re.search(r"<(\w+):(\w+)>", str(pattern.pattern))
        if first:
            assert first.groups() == ("int", "pk"), f"{concern.urls_module}: {pattern.pattern}"
    api = importlib.import_module(concern.api_module)
    for prefix, viewset, _ in api.ROUTES:
        assert getattr(viewset, "lookup_field", "pk") == "pk", prefix


#: A page's URL name: ``<subject>_<role>`` (docs/architecture.md, "One name per role"), or one
#: word for a page of the concern rather than of one subject (``probes:presets``).
URL_NAME = re.compile(r"(?P<subject>[a-z]+)_(?P<role>[a-z]+)|[a-z]+")


def models_of(concern: concerns.Concern) -> set[str]:
    return {
        model._meta.model_name
        for model in django_apps.get_app_config(concern.app_label).get_models()
    }


@pytest.mark.parametrize("concern", CONCERNS, ids=IDS)
def test_each_concern_names_its_pages_after_their_subjects(concern):
    """``<subject>_detail`` at ``<subjects>/<int:pk>/``, served by ``views.<subject>_detail``;
    ``<subject>_add`` at ``<subjects>/new/`` and ``<subject>_edit``, both ``views.<subject>_edit``."""
    urls = importlib.import_module(concern.urls_module)
    named = [p for p in urls.urlpatterns if p.name]
    models = models_of(concern)
    details = set()
    for pattern in named:
        match = URL_NAME.fullmatch(pattern.name)
        assert match, f"{concern.urls_module}: {pattern.name!r} is not <subject>_<role>"
        subject, role = match.group("subject", "role")
        view = pattern.callback.__name__
        if subject is None:
            assert view == pattern.name, (concern.urls_module, pattern.name, view)
            continue
        assert subject in models, f"{concern.urls_module}: {pattern.name}: no model {subject!r}"
        assert view == (f"{subject}_edit" if role == "add" else pattern.name), (pattern.name, view)
        route = f"/{concern.key}/{pattern.pattern}"  # mounted at /<key>/
        if role == "detail":
            details.add(subject)
            assert route.endswith("s/<int:pk>/"), f"{concern.urls_module}: {pattern.name} {route}"
        if role == "add":
            assert route.endswith("s/new/"), f"{concern.urls_module}: {pattern.name} {route}"
    assert details, f"{concern.urls_module} has no <subject>_detail"
    for link in concern.add_links:
        assert link.url_name.startswith(f"{concern.key}:") and link.url_name.endswith("_add")


@pytest.mark.parametrize("concern", CONCERNS, ids=IDS)
def test_each_concerns_forms_live_in_forms_py(concern):
    for path in folder(concern).glob("*.py"):
        if path.name == "forms.py":
            continue
        forms = [
            node.name
            for node in statements(parsed(path))
            if isinstance(node, ast.ClassDef)
            and any(
                ast.unparse(base).split(".")[-1] in ("Form", "ModelForm") for base in node.bases
            )
        ]
        assert not forms, f"{path}: move {', '.join(forms)} to forms.py"


def test_emails_are_named_name_dash_part():
    """``<name>-subject.txt``, ``<name>-body-text.txt``, ``<name>-body-html.html``: one way."""
    for path in (ROOT / "templates" / "emails").iterdir():
        assert re.fullmatch(r"[a-z]+-(subject\.txt|body-text\.txt|body-html\.html)", path.name), (
            path
        )


@pytest.mark.parametrize("concern", CONCERNS, ids=IDS)
def test_the_keys_of_each_concern_agree(concern):
    assert concern.key == concern.app_label
    assert getattr(importlib.import_module(concern.urls_module), "app_name", None) == concern.key
    assert celery_module.queue_for(f"{concern.tasks_module}.anything", None, []) == concern.key
    assert concerns.check() == []


# --- a concern declares itself once ----------------------------------------------------------


def test_config_names_no_concern():
    """config/ imports no concern and names none in its code (INSTALLED_APPS aside)."""
    for path in (ROOT / "config").rglob("*.py"):
        if path.name == "test.py":  # installs the tests' concern: INSTALLED_APPS only
            continue
        tree = ast.parse(path.read_text())
        docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        named = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        named += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        named += [
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
        ]
        for key in ("efs", "galera", "raid", "probes", "ebs", "concern_app"):
            found = [name for name in named if re.search(rf"\b{key}\.", name)]
            assert not found, (path, found)


def test_the_tests_concern_gets_its_queue_with_no_edit_in_config():
    assert celery_module.queue_for("tests.concern_app.tasks.collect_gadget", None, []) == "gadgets"
    assert celery_module.queue_for("tests.concern_app.tasks.x", "lab", ["lab"]) == "gadgets.lab"
    assert "gadgets" in celery_module.all_queues([])


@pytest.mark.django_db
def test_the_tests_concern_gets_its_pages_and_api_routes(logged_in_client):
    region = Region.objects.create(code="lab", name="Lab", kind=Region.Kind.SITE)
    gadget = Gadget.objects.create(region=region, name="g1")
    assert reverse("gadgets:gadget_detail", args=[gadget.pk]) == f"/gadgets/{gadget.pk}/"
    page = logged_in_client.get(f"/gadgets/{gadget.pk}/")
    assert page.status_code == 200 and 'id="live"' in page.content.decode()
    live = logged_in_client.get(f"/gadgets/{gadget.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert live.lstrip().startswith('<div id="live"')
    listed = logged_in_client.get("/api/gadgets/").json()
    assert [g["name"] for g in listed["results"]] == ["g1"]
    assert "api:gadget-list" in {
        f"api:{name}" for name in get_resolver("config.api").reverse_dict if isinstance(name, str)
    }


@pytest.mark.django_db
def test_the_tests_concern_is_judged_through_its_own_pieces():
    from tests.concern_app import tasks

    region = Region.objects.create(code="lab", name="Lab", kind=Region.Kind.SITE)
    gadget = Gadget.objects.create(region=region, name="g1")
    assert tasks.collect_gadget(gadget.pk, reading=95.0) == "critical"
    assert tasks.collect_gadget(gadget.pk, reading=10.0) == "ok"


def test_the_tests_concern_gets_its_settings():
    assert settings.VIGIL_GADGETS_CRITICAL_PERCENT == 90.0
    assert "VIGIL_GADGETS_CRITICAL_PERCENT" in settings.KNOWN_VIGIL_VARIABLES


def test_compose_workers_consume_every_queue():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    consumed: set[str] = set()
    for service in compose["services"].values():
        command = service.get("command") or []
        if "-Q" in command:
            consumed |= set(command[command.index("-Q") + 1].split(","))
    expected = set(celery_module.all_queues([])) - {"gadgets"}  # not Vigil's: the tests'
    assert consumed == expected


# --- the start-up check ----------------------------------------------------------------------


def test_the_start_fails_when_a_concerns_keys_disagree(monkeypatch):
    app = SimpleNamespace(name="tests.concern_app", label="gadgets")
    wrong = concerns.Concern(
        "widgets", "Widgets", subjects=Gadget.objects.all, queue="efs", region_template="x"
    )
    monkeypatch.setattr(concerns, "_registry", dict(concerns._registry))
    concerns.register(app, wrong)
    messages = {error.id: error.msg for error in concerns.check()}
    assert "its key must be its app's label 'gadgets'" in messages["regions.E101"]
    assert "queue 'efs' is also 'efs''s" in messages["regions.E102"]
    assert "tests.concern_app.urls.app_name must be 'widgets'" in messages["regions.E103"]
    assert "its dispatch must be tests.concern_app.tasks.dispatch_due" in messages["regions.E104"]
    assert "it declares no" in messages["regions.E106"]


def test_the_start_fails_when_a_concern_lacks_a_piece(monkeypatch):
    app = SimpleNamespace(name="apps.lib", label="lib")  # a package with none of the pieces
    bare = concerns.Concern("lib", "Bare", subjects=Gadget.objects.all)
    monkeypatch.setattr(concerns, "_registry", dict(concerns._registry))
    concerns.register(app, bare)
    ids = [error.id for error in concerns.check()]
    assert {"regions.E103", "regions.E104", "regions.E105", "regions.E106"} <= set(ids)


# --- where concerns meet, and what else a concern declares (docs/architecture.md) ----------


@pytest.mark.parametrize("concern", CONCERNS, ids=IDS)
def test_each_concerns_history_tables_are_its_own_and_their_retention_a_known_setting(concern):
    for history in concern.history:
        assert history.model.split(".")[0] == concern.app_label, history.model
        assert history.days_setting in settings.KNOWN_VIGIL_VARIABLES, history.days_setting


@pytest.mark.parametrize("concern", CONCERNS, ids=IDS)
def test_each_concerns_aws_actions_name_the_adapter_that_calls_them(concern):
    for action, where in concern.aws_actions:
        assert re.match(r"^(ec2|cloudwatch|elasticfilesystem):[A-Z]\w+$", action), action
        assert (ROOT / where.split(":", 1)[0]).is_file(), where


@pytest.mark.django_db
@pytest.mark.parametrize("concern", CONCERNS, ids=IDS)
def test_an_aside_has_its_template_and_says_nothing_of_what_it_does_not_know(concern):
    from django.template.loader import get_template

    if concern.aside_context is None:
        assert concern.notes is None and not concern.aside_template
        return
    get_template(concern.aside_template)
    region = Region.objects.create(code="lab", name="Lab", kind=Region.Kind.SITE)
    stranger = Gadget.objects.create(region=region, name="g1")
    assert concern.aside_context(stranger) is None
    assert concern.notes(stranger) == {}

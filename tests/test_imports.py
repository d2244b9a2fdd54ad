"""The import graph of ``apps/``, with ``config/``, ``bench/`` and ``tests/plugins/`` around it,
points one way (docs/architecture.md, "Layers"): no module reaches itself again through its
imports, ``apps/lib``, the ground floor, imports no app, and between apps imports point down
the layers (``LAYERS``), so no two apps import each other.

Every ``import`` statement counts, at module level or inside a function, so a circle cannot hide
in a function body. Read with ``ast`` from the files, nothing imported (import-linter's
``layers`` contract says the same from the imported packages; this needs no new dependency).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from tests.helpers import ROOT, parsed, statements

APPS = ROOT / "apps"
#: What the import rules read: the apps, and the project's own code around them (settings and
#: entry points, the benchmarks, the tests' plugins).
SOURCES = [APPS, ROOT / "config", ROOT / "bench", ROOT / "tests" / "plugins"]

#: Imports that still close a circle, each with why; strike a line when its import goes.
KNOWN_CIRCLES: set[tuple[str, str]] = set()


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for folder in SOURCES for path in sorted(folder.rglob("*.py"))}


def imported(module: str, path: Path) -> Iterator[str]:
    """The modules of ``apps/`` that ``module`` imports, anywhere in the file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in statements(parsed(path)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            names = [f"{base}.{alias.name}" for alias in node.names]  # a submodule, or a name
        else:
            continue
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module:
                yield name


@cache
def graph() -> dict[str, set[str]]:
    """Each module's imports of ours, read when a test first asks (not while collecting, which
    every worker of ``make check`` does)."""
    return {module: set(imported(module, path)) for module, path in MODULES.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def without(imports: set[tuple[str, str]]) -> dict[str, set[str]]:
    return {m: targets - {t for s, t in imports if s == m} for m, targets in graph().items()}


def test_no_module_of_apps_imports_itself_back():
    assert circles(without(KNOWN_CIRCLES)) == []


def test_every_known_circle_is_still_there_to_strike():
    for known in KNOWN_CIRCLES:
        assert circles(without(KNOWN_CIRCLES - {known})), f"{known} closes no circle now"


def test_the_ground_floor_imports_no_app():
    upward = {
        (module, target)
        for module, targets in graph().items()
        if f"{module}.".startswith("apps.lib.")
        for target in targets
        if not f"{target}.".startswith("apps.lib.")
    }
    assert upward == set()


#: The apps from the ground up (docs/architecture.md, "Imports point down"): an app imports only
#: apps of the layers below its own, never one beside it. The API's plumbing authenticates with
#: the accounts' keys; regions hold the concern registry every app above reads; the alerts read
#: the subjects' transitions; ``/metrics`` gives the concerns its families; EBS knows the Galera
#: nodes' and RAID hosts' volumes ("Where concerns meet"); the demo builds its fleet with the
#: concerns' own code; the entry points, benchmarks and the tests' plugins stand on all of it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("apps.lib",),
    ("apps.accounts",),
    ("apps.api",),
    ("apps.regions",),
    ("apps.alerts",),
    ("apps.prometheus",),
    ("apps.efs", "apps.galera", "apps.raid", "apps.probes"),
    ("apps.ebs",),
    ("apps.demo",),
    ("config",),
    ("bench", "tests.plugins"),
)

#: Imports between apps that still point up or sideways, each with why; strike a line when its
#: imports go (``test_every_allowed_upward_import_is_still_there``).
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}


def app_of(module: str) -> str:
    """The app (``apps.<name>``) or the folder around them (``config``, ``bench``,
    ``tests.plugins``) a module belongs to."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] in ("apps", "tests") else parts[0]


LAYER_OF = {app: height for height, layer in enumerate(LAYERS) for app in layer}


def app_imports(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {
        (app_of(module), app_of(target))
        for module, targets in graph.items()
        if module != "apps"
        for target in targets
        if target != "apps" and app_of(module) != app_of(target)
    }


def test_every_app_has_its_layer():
    assert {app for pair in app_imports(graph()) for app in pair} - set(LAYER_OF) == set()
    assert {f"apps.{p.name}" for p in APPS.iterdir() if (p / "__init__.py").exists()} <= set(
        LAYER_OF
    )


def not_down(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(a, b) for a, b in app_imports(graph) if LAYER_OF[a] <= LAYER_OF[b]}


def test_imports_between_apps_point_down_the_layers():
    assert not_down(graph()) - set(ALLOWED_UPWARD) == set()


def test_every_allowed_upward_import_is_still_there():
    assert set(ALLOWED_UPWARD) - not_down(graph()) == set()


def test_no_two_apps_import_each_other_but_the_allowed():
    """The apps' graph has no circle once the allowed imports are set aside (a circle between
    apps needs an import that does not point down, so this holds while the layers do)."""
    apps_graph: dict[str, set[str]] = {}
    for a, b in app_imports(graph()) - set(ALLOWED_UPWARD):
        apps_graph.setdefault(a, set()).add(b)
    assert circles(apps_graph) == []


def test_it_sees_an_import_up_or_beside():
    graph = {"apps.lib.x": set(), "apps.regions.views": {"apps.alerts.models"}}
    graph |= {"apps.alerts.models": {"apps.regions.models"}, "apps.efs.v": {"apps.raid.m"}}
    assert not_down(graph) == {
        ("apps.regions", "apps.alerts"),
        ("apps.efs", "apps.raid"),
    }
    assert app_of("tests.plugins.aws") == "tests.plugins" and app_of("config.urls") == "config"


def test_it_sees_a_circle_and_an_import_inside_a_function():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert "apps.regions.demo" in graph()["apps.galera.demo"]  # module level
    assert "apps.alerts.receivers" in graph()["apps.alerts.apps"]  # inside AlertsConfig.ready


def unexplained_imports(source: str, tree: ast.Module | None = None) -> list[int]:
    """Lines of imports of our own packages (``apps``, ``config``, ``bench``, ``tests``, or
    relative ones) inside a function with no comment on their line or on the line above the run
    of import statements they belong to. One pass over the statements (expressions hold none)."""
    lines = source.splitlines()
    found: list[int] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            run_start = None  # the first line of the run of imports a statement is in
            for statement in block:
                if not isinstance(statement, ast.Import | ast.ImportFrom):
                    run_start = None
                    visit(statement, in_function or isinstance(statement, FUNCTIONS))
                    continue
                run_start = run_start or statement.lineno
                if not in_function or not _ours(statement):
                    continue
                if "#" in lines[statement.lineno - 1]:
                    continue
                above = lines[run_start - 2].strip() if run_start > 1 else ""
                if not above.startswith("#"):
                    found.append(statement.lineno)

    visit(tree or ast.parse(source), False)
    return sorted(found)


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
OURS = {"apps", "config", "bench", "tests"}


def _ours(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] in OURS
    return any(alias.name.split(".")[0] in OURS for alias in node.names)


def test_every_import_inside_a_function_says_why():
    """An import belongs at the top of its module; one inside a function (an app's models in
    ``ready()``, a heavy library only some calls need) carries a comment saying why."""
    unexplained = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in MODULES.values()
        for line in unexplained_imports(path.read_text(), parsed(path))
    ]
    assert unexplained == []


def test_it_sees_an_unexplained_import_inside_a_function():
    source = (
        "def a():\n    from apps.x import y\n"
        "def b():\n    # why: the registry is ready only now\n    from apps.x import y\n"
        "    from . import z\n"
        "def c():\n    from .m import n  # why: heavy\n"
        "def d():\n    import json\n"
    )
    assert unexplained_imports(source) == [2]


def demo_piece(module: str) -> bool:
    """The demo app, a concern's ``demo.py`` and ``demo_*.py``, and what runs around Vigil (the
    entry points, the benchmarks, the tests)."""
    last = module.rpartition(".")[2]
    return (
        f"{module}.".startswith(("apps.demo.", "config.", "bench.", "tests."))
        or last == "demo"
        or last.startswith("demo_")
    )


def test_no_production_module_asks_the_demo():
    """Demo mode reaches production code only through the hooks the demo app fills in its
    ready() (docs/architecture.md, "The concern contract"): no other module imports a demo piece
    (the demo app, a concern's demo modules, or what they share below the concerns:
    ``apps/regions/demo.py``, ``apps/lib/demo_*.py``), but an app's ``apps.py`` registering its
    own as its concern's demo hooks."""
    asking = {
        (module, target)
        for module, targets in graph().items()
        if not demo_piece(module)
        for target in targets
        if demo_piece(target)
        and not (module.endswith(".apps") and app_of(module) == app_of(target))
    }
    assert asking == set()
    assert demo_piece("apps.raid.demo") and demo_piece("apps.efs.demo_clients")
    assert demo_piece("apps.regions.demo") and demo_piece("apps.lib.demo_runtime")
    assert not demo_piece("apps.lib.outbound") and not demo_piece("apps.alerts.mailbox")

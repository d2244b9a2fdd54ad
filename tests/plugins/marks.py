"""Collection: each test's marks (the services it needs, ``slow``), the modules left out
unimported under ``-m "not slow"``, and each test's xdist group (``make test`` runs
``-n 2 --dist loadgroup``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import ROOT

# What a test needs beyond Python and its database, read off the fixtures it uses and the modules
# that start processes themselves. Each such test is marked with its service and with
# ``services``, so that ``make check`` can run the rest alone (``pytest -m "not services"``) and
# one can leave out one kind (``pytest -m "not galera"``).
SERVICE_FIXTURES = {
    "galera_cluster": "galera",
    "nginx": "nginx",
    "sshd": "sshd",
    "browser_page": "browser",
    "chromium": "browser",
    "hosts_entry": "hosts",
    "redis": "redis",
    "slapd": "ldap",
    "oidc_provider": "oidc",
}
SERVICE_MODULES = {
    "tests/alerts/test_rabbitmq.py": "rabbitmq",
    "tests/alerts/test_worker_faults.py": "workers",
    "tests/test_deploy.py": "compose",
    "tests/test_compose.py": "compose",
    "tests/raid/test_agent.py": "agents",
    "tests/efs/test_agent.py": "agents",  # the shipped NFS agent, dnsmasq behind a slow proxy
    "tests/test_agents.py": "agents",
    "tests/probes/test_command.py": "workers",
    "tests/test_run.py": "workers",
    "tests/test_first_hour.py": "workers",
}
SERVICE_MARKS = {"browser", "faults", "e2e", "deployment"}
# Slow on their own, with no service (subprocesses, schema-wide fuzzing, the whole demo fleet on
# the stand-in, big fleets on the pages): marked ``slow`` where they are (``pytestmark`` for a
# module, ``@pytest.mark.slow`` for a test), left by ``make check`` to ``make test``. Found with
# ``pytest -m "not services" --durations=30``: each took over about five seconds; since 2026-11-26
# also those over about 1 s of CPU in themselves (per-test ``time.process_time``, docs/testing.md).


def slow_module(path: Path) -> bool:
    """Whether the test module's own ``pytestmark`` names ``pytest.mark.slow``: read from its
    syntax, without importing it."""
    import ast

    text = path.read_text(encoding="utf-8")
    if "mark.slow" not in text:
        return False
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytestmark" for target in node.targets
        ):
            return any(
                isinstance(part, ast.Attribute) and part.attr == "slow"
                for part in ast.walk(node.value)
            )
    return False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With slow tests left out (``-m "... not slow"``), the modules marked slow as a whole are
    not even imported (schemathesis and the fuzz strategies alone take seconds to import); with
    the services left out (``-m "not services ..."``), nor are the ``SERVICE_MODULES``."""
    markexpr = config.getoption("markexpr") or ""
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    module = (
        collection_path.relative_to(ROOT).as_posix() if collection_path.is_relative_to(ROOT) else ""
    )
    if "not services" in markexpr and module in SERVICE_MODULES:
        return True
    if "not slow" in markexpr and slow_module(collection_path):
        return True
    return None


# ``make test`` runs the tests in two processes (pytest-xdist, ``-n 2 --dist loadgroup``). What a
# session starts once and must not start twice (the one Galera cluster on its fixed ports, the one
# chromium, the one LDAP directory and OpenID provider, podman's one store, whole Vigil stacks)
# stays in one process: each test using it joins its ``xdist_group``, and loadgroup sends a
# group's tests, one after the other, to one worker. A test's group is read off the fixtures it
# uses and its marks; tests of a module with a module-scoped fixture go together too (it is set up
# once). Two services one test uses make one group. Everything else goes where a worker is free.
EXCLUSIVE_FIXTURES = {
    "galera_cluster": "galera",
    "chromium": "browser",
    "slapd": "ldap",
    "oidc_provider": "oidc",
    "migrated_sqlite": "stack",  # make run, started by the test
}
EXCLUSIVE_MARKS = {"compose": "compose", "stack": "stack"}


def xdist_groups(items: list[pytest.Item]) -> dict[pytest.Item, str]:
    """The xdist group of each test that needs one: the services it uses (``EXCLUSIVE_*``) and
    its module when it uses a module-scoped fixture, joined with every other test's that shares
    one of them (so that each lands in exactly one group)."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    keys_of: dict[pytest.Item, list[str]] = {}
    for item in items:
        keys = {
            EXCLUSIVE_FIXTURES[f]
            for f in getattr(item, "fixturenames", ())
            if f in EXCLUSIVE_FIXTURES
        }
        keys |= {EXCLUSIVE_MARKS[m.name] for m in item.iter_markers() if m.name in EXCLUSIVE_MARKS}
        info = getattr(item, "_fixtureinfo", None)
        for defs in info.name2fixturedefs.values() if info else ():
            if any(d.scope in ("module", "class", "package") and d.baseid for d in defs):
                keys.add(Path(str(item.fspath)).relative_to(ROOT).as_posix())
        if keys:
            keys_of[item] = sorted(keys)
            for key in keys_of[item]:
                parent[root(key)] = root(keys_of[item][0])
    members: dict[str, set[str]] = {}
    for key in list(parent):
        members.setdefault(root(key), set()).add(key)
    names = {top: "+".join(sorted(keys)) for top, keys in members.items()}
    return {item: names[root(keys[0])] for item, keys in keys_of.items()}


def tell_xdist_the_group(item: pytest.Item, group: str) -> None:
    """A worker of pytest-xdist 3.8 tells the controller a test's group by appending ``@group``
    to the test's node id, through a field (``_nodeid``) that pytest 9.2 no longer has: the
    groups are silently ignored (https://github.com/pytest-dev/pytest-xdist/issues/1386, open
    on 2026-11-26; the fix, pull request #1388, is not released). Done here as that fix does,
    on pytest's structured node id; a later xdist that appends it again leaves the group the same
    (the controller reads the text after the last ``@``)."""
    ident = getattr(item, "_id", None)
    if ident is not None and hasattr(type(ident), "parse"):
        item._id = type(ident).parse(f"{item.nodeid}@{group}")


def name_each_test_apart(item: pytest.Item) -> None:
    """Schemathesis 4 makes one test per API operation whose node id, under pytest 9.2, lacks
    the operation (``test_it_answers_every_operation…`` 128 times): pytest-xdist keys its work by
    node id, so under ``make test``'s two workers one operation ran and 127 were dropped without
    a word. The id takes the test's name, operation included, as pytest's own parametrize does."""
    ident = getattr(item, "_id", None)
    if ident is None or not hasattr(type(ident), "parse") or item.nodeid.endswith(item.name):
        return
    base, _, _ = item.nodeid.rpartition("::")
    item._id = type(ident).parse(f"{base}::{item.name}")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        name_each_test_apart(item)
    seen: set[str] = set()
    twice = sorted({item.nodeid for item in items if item.nodeid in seen or seen.add(item.nodeid)})
    if twice:  # xdist would run one of each and drop the rest without a word
        raise pytest.UsageError(f"tests that share an id: {', '.join(twice[:5])}")
    for item in items:
        needs = {
            SERVICE_FIXTURES[f] for f in getattr(item, "fixturenames", ()) if f in SERVICE_FIXTURES
        }
        module = Path(str(item.fspath)).relative_to(ROOT).as_posix()
        if module in SERVICE_MODULES:
            needs.add(SERVICE_MODULES[module])
        marks = {mark.name for mark in item.iter_markers()}
        needs |= SERVICE_MARKS & marks
        for name in sorted(needs):
            item.add_marker(name)
        if needs:
            item.add_marker("services")
    in_loadgroup_worker = hasattr(config, "workerinput") and config.getvalue("loadgroup")
    for item, group in xdist_groups(items).items():
        item.add_marker(pytest.mark.xdist_group(group))
        if in_loadgroup_worker:
            tell_xdist_the_group(item, group)
    # The browser tests go last, together: chromium starts once (see ``_Chromium``).
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)

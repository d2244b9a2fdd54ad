"""The marks that select tests (tests/plugins/marks.py) name only what exists, so that a renamed
module or fixture cannot silently drop its mark, and ``-m "not slow"`` and ``-m "not services"``
skip the right modules without importing them."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from tests.helpers import ROOT
from tests.plugins.marks import (
    EXCLUSIVE_FIXTURES,
    SERVICE_FIXTURES,
    SERVICE_MODULES,
    pytest_ignore_collect,
    slow_module,
    xdist_groups,
)

TESTS = ROOT / "tests"


@pytest.mark.parametrize("module", sorted(SERVICE_MODULES))
def test_every_module_named_for_its_service_exists(module):
    assert (ROOT / module).is_file(), f"SERVICE_MODULES names {module}, which is gone"


@pytest.mark.parametrize("fixture", sorted(set(SERVICE_FIXTURES) | set(EXCLUSIVE_FIXTURES)))
def test_every_fixture_named_for_its_service_is_defined_in_a_conftest_or_plugin(fixture):
    defined = re.compile(rf"^def {fixture}\(", re.M)
    places = [*TESTS.rglob("conftest.py"), *(TESTS / "plugins").glob("*.py")]
    assert any(defined.search(path.read_text()) for path in places), (
        f"SERVICE_FIXTURES names {fixture}, which no conftest.py or tests/plugins/ module defines"
    )


def test_test_modules_import_helpers_not_the_conftest():
    """Shared functions are in tests/helpers.py; a conftest is pytest's to load, not a module."""
    conftest = "tests." + "conftest"  # spelled apart: this module does not import it
    importing = [
        path.relative_to(ROOT).as_posix()
        for path in TESTS.rglob("*.py")
        if f"from {conftest} import" in path.read_text() or f"import {conftest}" in path.read_text()
    ]
    assert not importing, f"import from tests.helpers instead: {importing}"


def test_it_reads_a_slow_module_from_its_own_pytestmark(tmp_path):
    cases = {
        "pytestmark = pytest.mark.slow\n": True,
        "pytestmark = [pytest.mark.django_db, pytest.mark.slow]\n": True,
        "pytestmark = [\n    pytest.mark.fuzz,\n    pytest.mark.slow,\n]\n": True,
        "pytestmark = pytest.mark.django_db\n\n\n@pytest.mark.slow\ndef test_one(): ...\n": False,
        "# pytestmark = pytest.mark.slow\n": False,
    }
    for text, slow in cases.items():
        module = tmp_path / "test_case.py"
        module.write_text(f"import pytest\n\n{text}")
        assert slow_module(module) is slow, text


def test_the_slow_modules_are_the_ones_marked_so():
    slow = sorted(
        path.relative_to(ROOT).as_posix() for path in TESTS.rglob("test_*.py") if slow_module(path)
    )
    assert "tests/test_schemathesis.py" in slow and "tests/fuzz/test_properties.py" in slow
    assert "tests/test_marks.py" not in slow


def test_it_leaves_out_unimported_what_the_mark_expression_leaves_out():
    """``make check``'s ``-m "not services and not slow"`` imports neither a module marked slow
    nor one of ``SERVICE_MODULES``; other expressions import both."""

    def ignored(module: str, markexpr: str) -> bool:
        config = SimpleNamespace(getoption=lambda name: markexpr)
        return bool(pytest_ignore_collect(ROOT / module, config))

    service = sorted(SERVICE_MODULES)[0]
    slow = "tests/test_schemathesis.py"
    check = "not services and not slow"
    assert ignored(service, check) and ignored(slow, check)
    assert not ignored("tests/test_marks.py", check)
    assert ignored(service, "not services") and not ignored(slow, "not services")
    assert not ignored(service, "not slow") and ignored(slow, "not slow")
    assert not ignored(service, "") and not ignored(slow, "")
    assert not ignored(service, "services")


class _Item(SimpleNamespace):
    __hash__ = object.__hash__  # one test is one key, as pytest's items are
    __eq__ = object.__eq__


def _item(module: str, *fixtures: str, marks: tuple[str, ...] = (), module_scoped: str = ""):
    """What ``xdist_groups`` reads of a test: its fixtures (``module_scoped`` one of ours with
    that scope), its marks and its file."""
    defs = {name: [SimpleNamespace(scope="function", baseid="tests")] for name in fixtures}
    if module_scoped:
        defs[module_scoped] = [SimpleNamespace(scope="module", baseid=f"tests/{module}")]
    return _Item(
        fixturenames=[*fixtures, *([module_scoped] if module_scoped else [])],
        iter_markers=lambda: [SimpleNamespace(name=name) for name in marks],
        _fixtureinfo=SimpleNamespace(name2fixturedefs=defs),
        fspath=ROOT / "tests" / module,
    )


def test_it_puts_each_shared_service_and_module_fixture_in_one_xdist_group():
    plain = _item("test_a.py", "db", "moto_server")
    galera = _item("test_a.py", "galera_cluster")
    both = _item("test_b.py", "galera_cluster", module_scoped="stack")
    same_module = _item("test_b.py", "db", module_scoped="stack")
    browser = _item("test_c.py", "chromium")
    ldap = _item("test_d.py", "slapd")
    compose = _item("test_e.py", marks=("compose",))

    groups = xdist_groups([plain, galera, both, same_module, browser, ldap, compose])

    assert plain not in groups  # goes wherever a worker is free
    assert groups[galera] == groups[both] == groups[same_module] == "galera+tests/test_b.py"
    assert groups[browser] == "browser"
    assert groups[ldap] == "ldap"
    assert groups[compose] == "compose"


def test_every_test_of_a_shared_service_is_in_its_one_group(request):
    """On this run's own collection (the whole suite under ``make test``)."""
    groups: dict[str, set[str]] = {}
    for item in request.session.items:
        mark = item.get_closest_marker("xdist_group")
        for fixture, service in EXCLUSIVE_FIXTURES.items():
            if fixture in item.fixturenames:
                assert mark is not None, f"{item.nodeid} uses {fixture} but has no xdist_group"
                groups.setdefault(service, set()).add(mark.args[0])
    assert all(len(names) == 1 for names in groups.values()), groups


def test_every_test_of_a_service_carries_its_marks(request):
    """On this run's own collection: the hook marks every test by the services it uses, which
    ``make check``'s ``-m "not services"`` leans on (a misplaced ``raise`` once left every test
    unmarked, and the quick loop started the Galera cluster)."""
    for item in request.session.items:
        for fixture, service in SERVICE_FIXTURES.items():
            if fixture in item.fixturenames:
                assert item.get_closest_marker(service), f"{item.nodeid} lacks mark {service}"
                assert item.get_closest_marker("services"), f"{item.nodeid} lacks 'services'"

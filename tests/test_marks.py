"""The marks that select tests (tests/conftest.py) name only what exists, so that a renamed
module or fixture cannot silently drop its mark, and ``-m "not slow"`` skips the right modules
without importing them."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT, SERVICE_FIXTURES, SERVICE_MODULES, slow_module

TESTS = ROOT / "tests"


@pytest.mark.parametrize("module", sorted(SERVICE_MODULES))
def test_every_module_named_for_its_service_exists(module):
    assert (ROOT / module).is_file(), f"SERVICE_MODULES names {module}, which is gone"


@pytest.mark.parametrize("fixture", sorted(SERVICE_FIXTURES))
def test_every_fixture_named_for_its_service_is_defined_in_a_conftest(fixture):
    defined = re.compile(rf"^def {fixture}\(", re.M)
    assert any(defined.search(path.read_text()) for path in TESTS.rglob("conftest.py")), (
        f"SERVICE_FIXTURES names {fixture}, which no conftest.py defines"
    )


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

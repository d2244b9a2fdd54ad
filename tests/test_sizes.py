"""Units stay short enough to read at once (docs/architecture.md, "Rules of the road"): no
function of ``apps/`` over ``FUNCTION_CAP`` lines, and module docstrings that say what the module
is for in a few lines, leaving the design to ``docs/``. Read with ``ast``, nothing imported.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from tests.helpers import ROOT, parsed, statements

APPS = ROOT / "apps"

#: Lines from ``def`` (decorators left out) to the last line of the body, docstring included.
FUNCTION_CAP = 60

#: Functions still over the cap, each with why; strike a line when its function is split, and
#: add none: split a long function where a name helps instead (issue 33).
LONG_FUNCTIONS: dict[str, str] = {}

#: Lines of a module docstring, from its opening quotes to its closing ones.
DOCSTRING_CAP = 15

#: Module docstrings still over the cap, each with why; strike a line when it is trimmed.
LONG_DOCSTRINGS: dict[str, str] = {
    # The sources of documented figures stay beside the tables that cite them ([M1], [PERF]...):
    "apps/ebs/costs.py": "EBS prices: each source with its address and the day it was read",
    "apps/ebs/limits.py": "EBS volume and metric figures: each source, and what changed since",
    "apps/efs/documented.py": "EFS limits and metering: each source, and the 2018 rule kept",
}


def functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in statements(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def lines(node: ast.AST) -> int:
    return node.end_lineno - node.lineno + 1


def trees() -> dict[str, ast.Module]:
    """Each module of ``apps/`` parsed, when a test asks (not while collecting)."""
    return {path.relative_to(ROOT).as_posix(): parsed(path) for path in sorted(APPS.rglob("*.py"))}


@cache
def long_functions() -> dict[str, int]:
    return {
        f"{name}:{node.name}": lines(node)
        for name, tree in trees().items()
        for node in functions(tree)
        if lines(node) > FUNCTION_CAP
    }


@cache
def long_docstrings() -> dict[str, int]:
    found = {}
    for name, tree in trees().items():
        first = tree.body[0] if tree.body else None
        if ast.get_docstring(tree) is not None and lines(first) > DOCSTRING_CAP:
            found[name] = lines(first)
    return found


def test_no_function_of_apps_is_over_the_cap():
    over = {name: n for name, n in long_functions().items() if name not in LONG_FUNCTIONS}
    assert not over, f"split these functions to {FUNCTION_CAP} lines or fewer: {over}"


def test_no_module_docstring_of_apps_is_over_the_cap():
    over = {name: n for name, n in long_docstrings().items() if name not in LONG_DOCSTRINGS}
    assert not over, (
        f"say what these modules are for in {DOCSTRING_CAP} lines or fewer and move the rest "
        f"to docs/: {over}"
    )


def test_the_allow_lists_name_only_what_is_still_long():
    """A unit split or trimmed leaves the allow-list, so that it only shrinks."""
    split = set(LONG_FUNCTIONS) - set(long_functions())
    assert not split, f"strike these from LONG_FUNCTIONS: {split}"
    trimmed = set(LONG_DOCSTRINGS) - set(long_docstrings())
    assert not trimmed, f"strike these from LONG_DOCSTRINGS: {trimmed}"


def test_the_caps_see_a_long_function_and_a_long_docstring():
    doc = '"""' + "\n" * DOCSTRING_CAP + '"""\n'
    body = "    x = 1\n" * FUNCTION_CAP
    tree = ast.parse(f"{doc}def f():\n{body}")
    assert lines(tree.body[0]) == DOCSTRING_CAP + 1
    assert [lines(node) for node in functions(tree)] == [FUNCTION_CAP + 1]


def test_it_reads_every_module_of_apps():
    assert len(trees()) == len(list(Path(APPS).rglob("*.py"))) > 100

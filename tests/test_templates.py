"""Templates are wrapped as a person would wrap them (issue 33).

No line over 120 characters, met without breaking inside a tag: a long start tag puts its
attributes one per line, its first beside the tag's name and its ``>`` after the last, and
text breaks at a space or between block elements (table cells, list items, ``dt``/``dd``),
where the browser shows no difference. A Django tag cannot span lines; one that would be too
long becomes a ``{% with %}`` or an ``{% include %}``. A text email continues a line with
``{% comment %}`` at its end and ``{% endcomment %}`` on the next (docs/testing.md).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

LIMIT = 120
ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("templates", "apps/*/templates", "tests/concern_app/templates")
# Still wrapped by the old rule (lines up to 160 characters, tags broken before their '>'): each
# leaves this list once rewrapped.
NOT_YET_WRAPPED: set[str] = set()

TAG = r"\{%.*?%\}|\{\{.*?\}\}|\{#.*?#\}"
QUOTED = r'"(?:' + TAG + r'|[^"])*"|\'(?:' + TAG + r"|[^'])*'"
START_TAG = re.compile(r"<([a-zA-Z][\w-]*)((?:" + TAG + "|" + QUOTED + r"|[^>\"'])*)>", re.S)
CONDITIONAL = r"\{% if .*?%\}.*?\{% endif %\}"
ATTRIBUTE = re.compile(
    CONDITIONAL + r"|(?:" + TAG + r"|[^\s\"'=<>{}])+(?:=(?:" + QUOTED + r"|[^\s>]+))?|" + TAG
)


def templates() -> list[Path]:
    return sorted(
        path
        for pattern in FOLDERS
        for path in ROOT.glob(f"{pattern}/**/*")
        if path.suffix in (".html", ".txt")
    )


def attributes_per_line(inside: str) -> list[int]:
    """How many attributes each line of a start tag holds (``inside``: what follows its name)."""
    return [len(ATTRIBUTE.findall(line)) for line in inside.rstrip("/").split("\n")]


def problems(text: str, limit: int = LIMIT) -> list[str]:
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if len(line) > limit:
            found.append(f"{number}: {len(line)} characters")
        if re.match(r"\s*/?>", line):
            found.append(f"{number}: a tag broken before its '>'")
        if re.search(r"<[a-zA-Z][\w-]*\s*$", line):
            found.append(f"{number}: a tag's name alone at the end of the line")
    for tag in START_TAG.finditer(text):
        counts = attributes_per_line(tag.group(2))
        if len(counts) > 1 and any(n != 1 for n in counts):
            number = text.count("\n", 0, tag.start()) + 1
            found.append(f"{number}: <{tag.group(1)}> spans lines without one attribute per line")
    return found


def test_every_template_is_wrapped_as_a_person_would_without_breaking_inside_a_tag():
    found = []
    for path in templates():
        name = str(path.relative_to(ROOT))
        if name in NOT_YET_WRAPPED:
            found += [
                f"{name}:{n} ({len(line)})"
                for n, line in enumerate(path.read_text().splitlines(), 1)
                if len(line) > 160
            ]
            continue
        found += [f"{name}:{problem}" for problem in problems(path.read_text())]
    assert not found, "templates not wrapped as docs/testing.md says:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<a href="/x"\n   class="y">x</a>', []),
        (
            "<dd\n  >{{ x }}</dd>",
            [
                "1: a tag's name alone at the end of the line",
                "2: a tag broken before its '>'",
                "1: <dd> spans lines without one attribute per line",
            ],
        ),
        (
            '<code\n  class="x">',
            [
                "1: a tag's name alone at the end of the line",
                "1: <code> spans lines without one attribute per line",
            ],
        ),
        (
            '<a href="/x" title="t"\n   class="y">',
            ["1: <a> spans lines without one attribute per line"],
        ),
        ("x" * 121, ["1: 121 characters"]),
    ],
)
def test_the_check_refuses_each_way_of_breaking_a_tag(text, expected):
    assert problems(text) == expected

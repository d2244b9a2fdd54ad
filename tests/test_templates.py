"""Templates stay readable: no line over 160 characters (issue 20).

Django tags cannot span lines, but a tag's attribute list can, and text can break at a space; a
text email continues a line with {% comment %} at its end and {% endcomment %} on the next.
"""

from __future__ import annotations

from pathlib import Path

LIMIT = 160
ROOT = Path(__file__).resolve().parent.parent


def long_lines():
    for folder in (ROOT / "templates", ROOT / "tests" / "concern_app" / "templates"):
        for path in sorted(folder.rglob("*")):
            if path.suffix not in (".html", ".txt"):
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if len(line) > LIMIT:
                    yield f"{path.relative_to(ROOT)}:{number} ({len(line)} characters)"


def test_no_template_line_over_160_characters():
    found = list(long_lines())
    assert not found, "template lines over 160 characters:\n" + "\n".join(found)

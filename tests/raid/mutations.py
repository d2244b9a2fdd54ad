"""Hypothesis strategies that damage real samples: the shared part of the parser property tests."""

from __future__ import annotations

from hypothesis import strategies as st

# Characters that matter to the parsers, plus any other text.
_NASTY = st.sampled_from(list("[]()/:=%._-UFSWR0123456789 \t\xa0\r\n") + ["\x00", "\u2028", "é"])
_CHARS = st.one_of(_NASTY, st.characters())


@st.composite
def mutated(draw: st.DrawFn, texts: list[str]) -> str:
    """One fixture text after one to four random line or character edits."""
    text = draw(st.sampled_from(texts))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        lines = text.split("\n")
        edit = draw(st.sampled_from(["delete", "duplicate", "swap", "insert", "replace", "cut"]))
        i = draw(st.integers(min_value=0, max_value=len(lines) - 1))
        j = draw(st.integers(min_value=0, max_value=len(lines) - 1))
        if edit == "delete":
            del lines[i]
        elif edit == "duplicate":
            lines.insert(j, lines[i])
        elif edit == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        text = "\n".join(lines)
        if edit in {"insert", "replace"}:
            at = draw(st.integers(min_value=0, max_value=len(text)))
            chunk = draw(st.text(_CHARS, min_size=1, max_size=6))
            end = at + (draw(st.integers(min_value=1, max_value=6)) if edit == "replace" else 0)
            text = text[:at] + chunk + text[end:]
        elif edit == "cut":
            text = text[: draw(st.integers(min_value=0, max_value=len(text)))]
    return text

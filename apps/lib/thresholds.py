"""Thresholds per subject and per region, over the global defaults: one mechanism for every
concern (docs/architecture.md, "Thresholds per subject").

A concern declares the thresholds a person may set (``Spec``: name, unit, bounds) over its
thresholds dataclass (filled from settings by its glue: the global defaults); overrides are
set for a region (all the concern's subjects there) or for one subject. ``resolve`` gives the
dataclass a subject is judged with, the subject's over the region's over the default, and
``Notes`` that let a reason say which level applied ("this file system's threshold; default
90 %"). Pure: no Django, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from enum import StrEnum
from typing import Any, TypeVar

T = TypeVar("T")


class Level(StrEnum):
    SUBJECT = "subject"
    REGION = "region"
    DEFAULT = "default"


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Spec:
    """One threshold a region or a subject may set: ``name`` is what the API and the form
    take, ``field`` the concern's thresholds dataclass field (``name`` when empty), with
    ``to_field``/``from_field`` between the number people give and the field's value (hours
    and a ``timedelta``, say)."""

    name: str
    label: str
    unit: str
    low: float
    high: float
    whole: bool = False
    field: str = ""
    #: Another threshold this one may not exceed where both apply (critical under warning).
    at_most: str = ""
    to_field: Callable[[float], Any] = _same
    from_field: Callable[[Any], float] = float

    @property
    def field_name(self) -> str:
        return self.field or self.name

    def shown(self, number: float) -> str:
        """``90 %``, ``12 h``, ``10 write-sets``."""
        text = f"{number:g}"
        return f"{text} {self.unit}" if self.unit else text


@dataclass(frozen=True)
class Notes:
    """For each threshold set above the default level: the words a reason adds."""

    by_name: tuple[tuple[str, str], ...] = ()

    def __call__(self, name: str) -> str:
        """``"this file system's threshold; default 90 %"``, or "" for the global default."""
        return dict(self.by_name).get(name, "")

    def suffix(self, name: str) -> str:
        """`` (this file system's threshold; default 90 %)``, or ""."""
        words = self(name)
        return f" ({words})" if words else ""


@dataclass(frozen=True)
class Row:
    """One threshold as a page or the API shows it."""

    spec: Spec
    default: float
    region: float | None
    subject: float | None

    @property
    def level(self) -> Level:
        if self.subject is not None:
            return Level.SUBJECT
        return Level.REGION if self.region is not None else Level.DEFAULT

    @property
    def value(self) -> float:
        for number in (self.subject, self.region):
            if number is not None:
                return number
        return self.default


def check(specs: Sequence[Spec], given: object) -> dict[str, float]:
    """Overrides as a plain dict of numbers; ``ValueError`` in words when they are not."""
    known = {s.name: s for s in specs}
    names = ", ".join(known)
    if given in (None, ""):
        return {}
    if not isinstance(given, Mapping):
        raise ValueError(f"Give an object of threshold -> number, of: {names}")
    out: dict[str, float] = {}
    for name, number in given.items():
        spec = known.get(name)
        if spec is None:
            raise ValueError(f"No threshold {name!r}: one of {names}")
        if isinstance(number, bool) or not isinstance(number, int | float):
            raise ValueError(f"{name}: give a number")
        if isinstance(number, float) and not math.isfinite(number):  # JSON's 1e999 is inf
            raise ValueError(f"{name}: give a finite number")
        if spec.whole and number != int(number):
            raise ValueError(f"{name}: give a whole number")
        if not spec.low <= number <= spec.high:
            raise ValueError(f"{name}: between {spec.low:g} and {spec.shown(spec.high)}")
        out[name] = float(number)
    for spec in specs:
        ceiling = out.get(spec.at_most)
        if spec.at_most and spec.name in out and ceiling is not None and out[spec.name] > ceiling:
            raise ValueError(f"{spec.name} must not be above {spec.at_most}")
    return out


def kept(specs: Sequence[Spec], given: object) -> dict[str, float]:
    """``check``'s overrides, or none when they do not pass (set outside the API)."""
    try:
        return check(specs, given)
    except ValueError:
        return {}


def _get(base: object, path: str) -> Any:
    for part in path.split("."):
        base = getattr(base, part)
    return base


def defaults(specs: Sequence[Spec], base: object) -> dict[str, float]:
    """The global default of each threshold, read from the concern's dataclass (a ``field``
    may be a path into a part of it: ``disk.pending_sectors``)."""
    return {s.name: s.from_field(_get(base, s.field_name)) for s in specs}


def _changed(base: Any, changes: Mapping[str, Any], notes: Notes) -> Any:
    """``base`` with ``changes`` (paths), and ``notes`` on it and on each part that changed
    (where it has a ``notes`` field)."""
    own: dict[str, Any] = {}
    parts: dict[str, dict[str, Any]] = {}
    for path, value in changes.items():
        head, _, rest = path.partition(".")
        if rest:
            parts.setdefault(head, {})[rest] = value
        else:
            own[head] = value
    for head, inner in parts.items():
        own[head] = _changed(getattr(base, head), inner, notes)
    if any(f.name == "notes" for f in fields(base)):
        own["notes"] = notes
    return replace(base, **own)


def rows(
    specs: Sequence[Spec],
    base: object,
    region: Mapping[str, float] | None = None,
    subject: Mapping[str, float] | None = None,
) -> list[Row]:
    """Each threshold with its default, its region's value and its subject's (None: not set)."""
    region, subject, default = region or {}, subject or {}, defaults(specs, base)
    return [Row(s, default[s.name], region.get(s.name), subject.get(s.name)) for s in specs]


def resolve(
    specs: Sequence[Spec],
    base: T,
    region: Mapping[str, float] | None = None,
    subject: Mapping[str, float] | None = None,
    *,
    noun: str,
    region_label: str,
) -> T:
    """``base`` (a frozen dataclass, with a ``notes: Notes`` field) with each threshold the
    subject sets, else its region's, else the default; the notes name the level that applied
    ("this file system's threshold", "eu-west-1's threshold") and the default it replaced."""
    changes: dict[str, Any] = {}
    notes: list[tuple[str, str]] = []
    for row in rows(specs, base, region, subject):
        if row.level is Level.DEFAULT:
            continue
        spec = row.spec
        whose = f"this {noun}'s" if row.level is Level.SUBJECT else f"{region_label}'s"
        notes.append((spec.name, f"{whose} threshold; default {spec.shown(row.default)}"))
        changes[spec.field_name] = spec.to_field(int(row.value) if spec.whole else row.value)
    if not changes:
        return base
    return _changed(base, changes, Notes(tuple(notes)))


@dataclass(frozen=True)
class ThresholdSet:
    """What a concern declares (``Concern(thresholds=...)``): its settable thresholds, the
    global defaults (``base()``: its thresholds dataclass from settings) and what one subject
    is called in a reason ("file system")."""

    specs: tuple[Spec, ...]
    base: Callable[[], Any]
    noun: str

    def check(self, given: object) -> dict[str, float]:
        return check(self.specs, given)

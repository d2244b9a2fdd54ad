"""Thresholds set per region and per subject (``Threshold`` rows), for every concern that
declares some (``Concern.thresholds``, ``apps.lib.thresholds.ThresholdSet``): read in one
query per region, resolved for a subject's verdict, shown beside the defaults, and replaced
by admins row by row, so that the audit trail has each change (docs/architecture.md,
"Thresholds per subject")."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from django.db import transaction
from django.db.models import Model
from django.utils import timezone

from apps.lib import thresholds as lib
from apps.lib.thresholds import ThresholdSet

from . import concerns
from .models import Region, Threshold

#: The permission that edits thresholds (admins: operators do not hold it).
PERMISSION = "regions.change_threshold"


def declared(concern: str) -> ThresholdSet:
    """The concern's declaration; ``LookupError`` when it declares none."""
    found = concerns.find(concern)
    if found is None or found.thresholds is None:
        raise LookupError(f"{concern!r} has no thresholds of its own")
    return found.thresholds


def with_thresholds() -> list[concerns.Concern]:
    return [c for c in concerns.registered() if c.thresholds is not None]


Overrides = dict[int | None, dict[str, float]]  # subject id (None: the region) -> name -> value


def overrides(concern: str, region_ids: Iterable[int]) -> dict[int, Overrides]:
    """``{region_id: {subject_id or None: {name: value}}}`` set for ``concern`` (one query)."""
    found: dict[int, Overrides] = defaultdict(lambda: defaultdict(dict))
    rows = Threshold.objects.filter(concern=concern, region_id__in=list(region_ids))
    for region_id, subject_id, name, value in rows.values_list(
        "region_id", "subject_id", "name", "value"
    ):
        found[region_id][subject_id][name] = value
    return found


def region_overrides(region_id: int, keys: Iterable[str]) -> dict[str, Overrides]:
    """``{concern: {subject_id or None: {name: value}}}`` set in one region for each concern of
    ``keys`` (one query for all, the region page's section: ``overrides`` reads one concern)."""
    found: dict[str, Overrides] = {key: defaultdict(dict) for key in keys}
    rows = Threshold.objects.filter(region_id=region_id, concern__in=list(found))
    for concern, subject_id, name, value in rows.values_list(
        "concern", "subject_id", "name", "value"
    ):
        found[concern][subject_id][name] = value
    return found


def resolver(concern: str, region: Region, base: Any = None) -> Callable[[Model], Any]:
    """A function giving each subject of ``region`` the thresholds it is judged with (the
    concern's dataclass: the subject's over the region's over ``base``, the defaults); one
    query for the whole region."""
    spec = declared(concern)
    base = spec.base() if base is None else base
    found = overrides(concern, [region.pk]).get(region.pk, {})
    own_region = lib.kept(spec.specs, found.get(None, {}))

    def for_subject(subject: Model) -> Any:
        return lib.resolve(
            spec.specs,
            base,
            own_region,
            lib.kept(spec.specs, found.get(subject.pk, {}) if subject.pk is not None else {}),
            noun=spec.noun,
            region_label=region.code,
        )

    return for_subject


def for_subject(subject: Model, base: Any = None) -> Any:
    """The thresholds ``subject`` is judged with (a ``regions.Subject``: its concern, region)."""
    return resolver(subject.concern, subject.region, base)(subject)  # type: ignore[attr-defined]


def table(
    concern: str, region: Region, subject_id: int | None = None, found: Overrides | None = None
) -> list[lib.Row]:
    """Each threshold of ``concern`` with its default, the region's and the subject's value
    (``found``: the region's ``overrides``, when already read)."""
    spec = declared(concern)
    if found is None:
        found = overrides(concern, [region.pk]).get(region.pk, {})
    own = found.get(subject_id, {}) if subject_id is not None else None
    return lib.rows(spec.specs, spec.base(), found.get(None, {}), own)


@transaction.atomic
def replace(concern: str, region: Region, subject_id: int | None, given: object) -> dict:
    """Set exactly ``given`` (``{name: number}``; ``ValueError`` in words when it is not) for the
    subject, or for the region when ``subject_id`` is None: each row created, changed or
    deleted by the ORM, so that the audit trail records it and who did it."""
    values = declared(concern).check(given)
    existing = {
        t.name: t
        for t in Threshold.objects.select_for_update().filter(
            concern=concern, region=region, subject_id=subject_id
        )
    }
    for name, row in existing.items():
        if name not in values:
            row.delete()
    for name, value in values.items():
        row = existing.get(name)
        if row is None:
            Threshold.objects.create(
                concern=concern, region=region, subject_id=subject_id, name=name, value=value
            )
        elif row.value != value:
            row.value, row.changed = value, timezone.now()
            row.save(update_fields=["value", "changed"])
    return values


def as_json(rows: list[lib.Row]) -> dict[str, Any]:
    """A table for the API: the subject's own (``own``), the region's, the defaults and what
    applies, by the names PUT takes."""
    return {
        "own": {r.spec.name: r.subject for r in rows if r.subject is not None},
        "region": {r.spec.name: r.region for r in rows if r.region is not None},
        "defaults": {r.spec.name: r.default for r in rows},
        "applied": {r.spec.name: {"value": r.value, "level": r.level.value} for r in rows},
        "units": {r.spec.name: r.spec.unit for r in rows},
    }


def form_values(specs: Iterable[lib.Spec], data: Any) -> dict[str, float]:
    """The numbers a thresholds form sent (an empty field: not set); ``ValueError`` in words."""
    values: dict[str, float] = {}
    for spec in specs:
        text = (data.get(spec.name) or "").strip()
        if not text:
            continue
        try:
            values[spec.name] = float(text)
        except ValueError:
            raise ValueError(f"{spec.label}: give a number") from None
    return values

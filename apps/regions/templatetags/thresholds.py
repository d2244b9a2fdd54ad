"""``{% thresholds subject %}`` and ``{% region_thresholds region %}``: the "Thresholds" section
of a subject page and of the region page, each threshold beside the global default (and the
region's, on a subject's page); a form for those who may edit them (``regions/thresholds.html``,
posted to ``regions:thresholds``)."""

from __future__ import annotations

from typing import Any

from django import template
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from apps.lib import thresholds as lib
from apps.regions import concerns
from apps.regions import thresholds as stored

register = template.Library()


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def _shown(row: lib.Row, noun: str, region: Any, subject: Any) -> dict[str, Any]:
    """A row as the template shows it (numbers as people write them)."""
    whose = {
        lib.Level.SUBJECT: f"this {noun}'s",
        lib.Level.REGION: f"{region.code}'s",
        lib.Level.DEFAULT: "default",
    }[row.level]
    own = row.subject if subject else row.region
    prefix = "subject" if subject else "region"
    return {
        "id": f"th-{row.spec.name}-{prefix}-{subject.pk if subject else region.pk}",
        "spec": row.spec,
        "applies": row.spec.shown(row.value),
        "whose": whose,
        "own": _number(own),
        "own_shown": row.spec.shown(own) if own is not None else "—",
        "region": row.spec.shown(row.region) if row.region is not None else "—",
        "default": row.spec.shown(row.default),
        "low": _number(row.spec.low),
        "high": _number(row.spec.high),
        "step": "1" if row.spec.whole else "any",
    }


def _section(context: template.Context, concern: Any, region: Any, subject: Any) -> str:
    request = context.get("request")
    noun = concern.thresholds.noun
    # One query per concern and region for the whole page (a RAID host lists many arrays).
    read = context.render_context.setdefault("vigil-thresholds", {})
    key = (concern.key, region.pk)
    if key not in read:
        read[key] = stored.overrides(concern.key, [region.pk]).get(region.pk, {})
    table = stored.table(concern.key, region, subject.pk if subject else None, read[key])
    rows = [_shown(row, noun, region, subject) for row in table]
    return render_to_string(
        "regions/thresholds.html",
        {
            "concern": concern,
            "region": region,
            "subject": subject,
            "rows": rows,
            "noun": noun,
            "anchor": f"thresholds-{concern.key}" + (f"-{subject.pk}" if subject else ""),
            "can_edit": bool(request and request.user.has_perm(stored.PERMISSION)),
        },
        request=request,
    )


@register.simple_tag(takes_context=True)
def thresholds(context: template.Context, subject: Any) -> SafeString:
    """The subject's thresholds (its own, its region's, the defaults); "" if it has none."""
    concern = concerns.find(getattr(subject, "concern", ""))
    if concern is None or concern.thresholds is None:
        return mark_safe("")
    regions = context.render_context.setdefault("vigil-threshold-regions", {})
    if subject.region_id not in regions:  # once per page (a RAID host lists many arrays)
        regions[subject.region_id] = subject.region
    # A template rendered with autoescape.
    return mark_safe(_section(context, concern, regions[subject.region_id], subject))


@register.simple_tag(takes_context=True)
def region_thresholds(context: template.Context, region: Any) -> SafeString:
    """Every concern's thresholds for the whole region, beside the defaults."""
    found = stored.with_thresholds()
    # Every concern's, read at once for the sections below.
    read = context.render_context.setdefault("vigil-thresholds", {})
    for key, overrides in stored.region_overrides(region.pk, [c.key for c in found]).items():
        read.setdefault((key, region.pk), overrides)
    parts = [_section(context, concern, region, None) for concern in found]
    if not parts:
        return mark_safe("")
    # Templates rendered with autoescape.
    return mark_safe(
        '<section id="thresholds" aria-labelledby="thresholds-title">'
        '<h2 id="thresholds-title">Thresholds</h2>' + "".join(parts) + "</section>"
    )

"""What a routing rule or a silence applies to, in the words the pages use: a region, a concern
(from the concern registry) and one subject (chosen from a list with a search), and the check
that refuses a scope that could never match anything (a RAID array under the concern
"Keep-alive", a subject of another region).

A subject is written ``<content type id>:<object id>`` in a form (one ``<select>``); the rule
and the silence keep the pair as two columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db.models import Model, Q

from apps.regions import concerns
from apps.regions.models import Region, Subject

#: The fields a subject is found by, where its model has them (what people name subjects by:
#: a name, an EFS id, a probed URL, a RAID array's host). The list shows the first ``LIMIT``.
SEARCHED = ("name", "filesystem_id", "url", "host__name")
LIMIT = 100


@dataclass(frozen=True)
class Choice:
    value: str  # "<content type id>:<object id>"
    label: str  # "md-RAID demo-storage-client:md2 · eu-west-1"
    concern: str  # the concern's label, for the list's groups


def value_of(subject: Model) -> str:
    return f"{ContentType.objects.get_for_model(subject).pk}:{subject.pk}"


def describe(subject: Subject) -> str:
    """``Keep-alive Demo: web front end (eu-west-1)``: a subject as the pages name it."""
    region = subject.region
    where = region.code if region.kind == Region.Kind.AWS else (region.name or region.code)
    return f"{concerns.label_of(subject.concern)} {subject} ({where})"


def choice(subject: Subject) -> Choice:
    return Choice(value_of(subject), describe(subject), concerns.label_of(subject.concern))


def subject_of(content_type: object, object_id: object) -> Subject | None:
    """The monitored subject a (content type, id) pair names, or None."""
    try:
        ct = ContentType.objects.get_for_id(int(str(content_type)))
    except (ValueError, ContentType.DoesNotExist):
        return None
    model = ct.model_class()
    if model is None or not issubclass(model, Subject) or not str(object_id).isdigit():
        return None
    return model._default_manager.select_related("region").filter(pk=int(object_id)).first()


def parse(value: str) -> tuple[int, int] | None:
    """``"12:34"`` -> (12, 34); None for empty; ``ValidationError`` for anything else."""
    if not value:
        return None
    ct, _, pk = value.partition(":")
    if not (ct.isdigit() and pk.isdigit() and len(value) < 40):
        raise ValidationError("Choose a subject from the list.")
    return int(ct), int(pk)


def _searched(model: type[Model]) -> list[str]:
    fields = []
    for path in SEARCHED:
        first, _, rest = path.partition("__")
        try:
            field = model._meta.get_field(first)
        except FieldDoesNotExist:
            continue
        if rest and not field.is_relation:
            continue
        fields.append(path)
    return fields


def find(
    query: str = "", *, concern: str = "", region: object = None, keep: str = ""
) -> list[Choice]:
    """Subjects whose name (or id, URL, host) contains ``query``, of ``concern`` and in
    ``region`` when given, grouped by concern, at most ``LIMIT``; ``keep`` (a chosen value)
    is listed whatever the search, so the choice is never lost."""
    query = query.strip()[:100]
    found: list[Choice] = []
    for c in concerns.registered():
        if concern and c.key != concern:
            continue
        subjects = c.subjects().select_related("region")
        if region:
            subjects = subjects.filter(region_id=region)
        searched = _searched(subjects.model)
        if query:
            if not searched:
                continue
            match = Q()
            for path in searched:
                match |= Q(**{f"{path}__icontains": query})
            subjects = subjects.filter(match)
        if "host__name" in searched:
            subjects = subjects.select_related("host")
        order = [f for f in searched if "__" not in f][:1] or ["pk"]
        for subject in subjects.order_by(*order, "pk")[: LIMIT - len(found)]:
            found.append(choice(subject))
        if len(found) >= LIMIT:
            break
    if keep and keep not in {c.value for c in found}:
        kept = subject_of(*keep.partition(":")[::2]) if ":" in keep else None
        if kept is not None:
            found.insert(0, choice(kept))
    return found


def check(region: Region | None, concern: str, subject: Subject | None) -> dict[str, str]:
    """What makes this scope one that can never match, per field (empty: it can match)."""
    errors: dict[str, str] = {}
    if concern and concern not in dict(concerns.choices()):
        known = ", ".join(f"{label} ({key})" for key, label in concerns.choices())
        errors["concern"] = f"No concern {concern!r}: one of {known}."
    if subject is None:
        return errors
    name = describe(subject)
    if concern and subject.concern != concern:
        errors["concern"] = (
            f"{name} is {concerns.label_of(subject.concern)}, not "
            f"{concerns.label_of(concern)}: this would never match. Choose the subject's "
            "concern, or any concern."
        )
    if region is not None and subject.region_id != region.pk:
        errors["region"] = (
            f"{name} is not in {region}: this would never match. Choose its region, or any region."
        )
    return errors


def check_scope(scope: Any) -> None:
    """A rule's or silence's ``clean()``: the subject pair is whole and names a monitored
    subject, and region, concern and subject can match together (``ValidationError`` per
    field otherwise)."""
    if bool(scope.content_type_id) != bool(scope.object_id):
        raise ValidationError("A subject needs both its type and its id.")
    subject = None
    if scope.content_type_id:
        subject = subject_of(scope.content_type_id, scope.object_id)
        if subject is None:
            raise ValidationError("No such monitored subject.")
    region = scope.region if scope.region_id else None
    errors = check(region, scope.concern, subject)
    if errors:
        raise ValidationError(errors)

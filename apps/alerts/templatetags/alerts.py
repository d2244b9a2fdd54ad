from __future__ import annotations

from django import template
from django.contrib.contenttypes.models import ContentType
from django.db.models import Model
from django.urls import reverse

from apps.alerts import scopes
from apps.alerts.content import concern_label as label_for

register = template.Library()


@register.filter
def concern_label(key: str) -> str:
    """``{{ incident.concern|concern_label }}``: "efs" → "EFS", as the concern registered it."""
    return label_for(key)


@register.filter
def history_url(subject: Model) -> str:
    """``{{ fs|history_url }}``: the subject's status changes and where each alert went."""
    content_type = ContentType.objects.get_for_model(subject)  # cached per process
    return reverse("alerts:history", args=[content_type.pk, subject.pk])


@register.filter
def scope_subject(scope: Model) -> str:
    """``{{ rule|scope_subject }}``: the one subject a rule or silence is for, named as the pages
    name it ("Keep-alive Demo: web front end (eu-west-1)"), or "" for none."""
    if not scope.content_type_id:
        return ""
    subject = scopes.subject_of(scope.content_type_id, scope.object_id)
    return scopes.describe(subject) if subject is not None else "a subject no longer monitored"


def _named(content_type_id: int, object_id: int) -> str:
    subject = scopes.subject_of(content_type_id, object_id)
    return scopes.describe(subject) if subject is not None else "a subject no longer monitored"


@register.filter
def dependent_name(dependency: Model) -> str:
    """``{{ dependency|dependent_name }}``: the subject that depends, as the pages name it."""
    return _named(dependency.content_type_id, dependency.object_id)


@register.filter
def upstream_name(dependency: Model) -> str:
    """``{{ dependency|upstream_name }}``: what it depends on, as the pages name it."""
    return _named(dependency.upstream_type_id, dependency.upstream_id)

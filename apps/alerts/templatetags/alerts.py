from __future__ import annotations

from django import template
from django.contrib.contenttypes.models import ContentType
from django.db.models import Model
from django.urls import reverse

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

"""Transitions: a subject's status change, written once (healthchecks' Flip)."""

from __future__ import annotations

from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.db.models import Q
from django.utils import timezone

from apps.regions.models import STATUS_CHOICES, Region


class Transition(models.Model):
    content_type = models.ForeignKey(ContentType, models.CASCADE)
    object_id = models.PositiveBigIntegerField()
    subject = GenericForeignKey("content_type", "object_id")
    region = models.ForeignKey(Region, models.CASCADE, related_name="transitions")
    concern = models.CharField(max_length=20)
    subject_label = models.CharField(max_length=255)
    old_status = models.CharField(max_length=10, choices=STATUS_CHOICES)
    new_status = models.CharField(max_length=10, choices=STATUS_CHOICES)
    reason = models.TextField()
    figures = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(default=timezone.now, db_index=True)
    processed = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        indexes = [
            models.Index(fields=["content_type", "object_id", "-created"]),
            models.Index(
                fields=["created"], condition=Q(processed=None), name="transition_unprocessed"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.subject_label}: {self.old_status} → {self.new_status}"

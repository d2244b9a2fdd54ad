"""Transitions, incidents, routing rules, channels, the notification outbox and silences.

A subject's status change is written once as a ``Transition`` (healthchecks' Flip). In the same
transaction it opens, updates or closes the subject's ``Incident`` and becomes one
``Notification`` per channel its ``Rule``s route it to: the outbox. Delivery claims outbox rows
with a lease, so a worker that dies mid-send only delays a notification, never loses it.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.db.models import Q
from django.utils import timezone

from apps.lib.status import Status
from apps.regions.models import STATUS_CHOICES, Region


def severity(status: str) -> int:
    return Status(status).severity


class SubjectRef(models.Model):
    """Fields naming a monitored subject of any concern."""

    content_type = models.ForeignKey(ContentType, models.CASCADE)
    object_id = models.PositiveBigIntegerField()
    subject = GenericForeignKey("content_type", "object_id")
    region = models.ForeignKey(Region, models.CASCADE, related_name="+")
    concern = models.CharField(max_length=20)
    subject_label = models.CharField(max_length=255)

    class Meta:
        abstract = True


class Transition(SubjectRef):
    region = models.ForeignKey(Region, models.CASCADE, related_name="transitions")
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

    @property
    def is_recovery(self) -> bool:
        return self.new_status == Status.OK


class Incident(SubjectRef):
    """A subject's stretch of not being ok: opened, updated, acknowledged, closed."""

    status = models.CharField(max_length=10, choices=STATUS_CHOICES)
    reason = models.TextField()
    opened = models.DateTimeField(default=timezone.now)
    closed = models.DateTimeField(null=True, blank=True)
    last_transition = models.ForeignKey(Transition, models.CASCADE, related_name="+")
    acknowledged = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+"
    )
    next_reminder = models.DateTimeField(null=True, blank=True)
    reminders_sent = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-opened"]
        constraints = [
            models.UniqueConstraint(
                fields=["content_type", "object_id"],
                condition=Q(closed=None),
                name="one_open_incident_per_subject",
            )
        ]
        indexes = [
            models.Index(
                fields=["next_reminder"], condition=Q(closed=None), name="incident_reminder_due"
            )
        ]

    def __str__(self) -> str:
        return f"{self.subject_label}: {self.status} since {self.opened:%Y-%m-%d %H:%M}"


class Channel(models.Model):
    class Kind(models.TextChoices):
        EMAIL = "email", "Email"

    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.EMAIL)
    target = models.TextField(help_text="Email: one or more addresses, comma-separated.")
    disabled = models.BooleanField(default=False)
    created = models.DateTimeField(default=timezone.now, editable=False)
    last_error = models.TextField(blank=True, editable=False)
    last_error_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_success = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_kind_display()})"

    @property
    def recipients(self) -> list[str]:
        return [a.strip() for a in self.target.replace(";", ",").split(",") if a.strip()]


class Rule(models.Model):
    """Who hears what: transitions matching every filter set here go to ``channels``.

    Empty filters match everything; a transition matches when its old or new status is at
    least ``min_severity`` (so the recovery of a critical is sent where the critical went).
    The default rule catches what no other rule routes.
    """

    name = models.CharField(max_length=100)
    region = models.ForeignKey(Region, models.CASCADE, null=True, blank=True)
    concern = models.CharField(max_length=20, blank=True)
    content_type = models.ForeignKey(ContentType, models.CASCADE, null=True, blank=True)
    object_id = models.PositiveBigIntegerField(null=True, blank=True)
    min_severity = models.CharField(
        max_length=10,
        choices=[(s.value, s.label) for s in (Status.WARNING, Status.UNKNOWN, Status.CRITICAL)],
        default=Status.WARNING.value,
    )
    channels = models.ManyToManyField(Channel, blank=True, related_name="rules")
    is_default = models.BooleanField(default=False, editable=False)
    enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ["-is_default", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["is_default"], condition=Q(is_default=True), name="one_default_rule"
            )
        ]

    def __str__(self) -> str:
        return self.name

    def matches(self, transition: Transition) -> bool:
        if self.region_id and self.region_id != transition.region_id:
            return False
        if self.concern and self.concern != transition.concern:
            return False
        if self.content_type_id and (
            self.content_type_id != transition.content_type_id
            or self.object_id != transition.object_id
        ):
            return False
        worst = max(severity(transition.old_status), severity(transition.new_status))
        return worst >= severity(self.min_severity)


class Silence(models.Model):
    """Planned maintenance: matching transitions are recorded but not sent until ``ends``."""

    region = models.ForeignKey(Region, models.CASCADE, null=True, blank=True)
    concern = models.CharField(max_length=20, blank=True)
    content_type = models.ForeignKey(ContentType, models.CASCADE, null=True, blank=True)
    object_id = models.PositiveBigIntegerField(null=True, blank=True)
    starts = models.DateTimeField(default=timezone.now)
    ends = models.DateTimeField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    comment = models.TextField(blank=True)
    created = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-ends"]

    def __str__(self) -> str:
        return f"silence until {self.ends:%Y-%m-%d %H:%M} by {self.author}"

    def matches(self, ref: SubjectRef) -> bool:
        return (
            (not self.region_id or self.region_id == ref.region_id)
            and (not self.concern or self.concern == ref.concern)
            and (
                not self.content_type_id
                or (self.content_type_id, self.object_id) == (ref.content_type_id, ref.object_id)
            )
        )


class Notification(models.Model):
    """The outbox: one row per transition (or reminder of it) per channel."""

    class Kind(models.TextChoices):
        TRANSITION = "transition", "Status change"
        REMINDER = "reminder", "Reminder"
        FLAPPING = "flapping", "Flapping summary"

    class State(models.TextChoices):
        PENDING = "pending", "Waiting to be sent"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed permanently"
        SILENCED = "silenced", "Silenced"
        SUPPRESSED = "suppressed", "Suppressed while flapping"

    transition = models.ForeignKey(Transition, models.CASCADE, related_name="notifications")
    channel = models.ForeignKey(Channel, models.CASCADE, related_name="notifications")
    kind = models.CharField(max_length=12, choices=Kind.choices, default=Kind.TRANSITION)
    sequence = models.PositiveIntegerField(
        default=0, help_text="0 for the change, n for reminder n"
    )
    state = models.CharField(max_length=12, choices=State.choices, default=State.PENDING)
    created = models.DateTimeField(default=timezone.now)
    next_attempt = models.DateTimeField(default=timezone.now)
    lease_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    sent = models.DateTimeField(null=True, blank=True)
    message_id = models.CharField(max_length=255, blank=True)
    group_key = models.CharField(max_length=64, blank=True, help_text="Sent in one email with")

    class Meta:
        ordering = ["-created"]
        constraints = [
            models.UniqueConstraint(
                fields=["transition", "channel", "kind", "sequence"], name="notify_once"
            )
        ]
        indexes = [
            models.Index(fields=["next_attempt"], condition=Q(state="pending"), name="outbox_due"),
            # The hold: what each channel was sent lately (delivery.held).
            models.Index(fields=["sent"], condition=Q(state="sent"), name="outbox_recent"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} of {self.transition} to {self.channel}: {self.state}"

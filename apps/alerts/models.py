"""Transitions, incidents, routing rules, channels, the notification outbox and silences.

A subject's status change is written once as a ``Transition`` (healthchecks' Flip). In the same
transaction it opens, updates or closes the subject's ``Incident`` and becomes one
``Notification`` per channel its ``Rule``s route it to: the outbox. Delivery claims outbox rows
with a lease, so a worker that dies mid-send only delays a notification, never loses it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, time

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from apps.accounts.audit import shown_url, track
from apps.lib.keep import KeepsHistory
from apps.lib.status import Status
from apps.regions import concerns
from apps.regions.models import STATUS_CHOICES, Region

from . import schedule
from .scopes import check_scope, subject_of


def severity(status: str) -> int:
    return Status(status).severity


def subject_history(subject: models.Model) -> list[str]:
    """A subject's status changes and incidents, in words (``apps.lib.keep``)."""
    ref = {"content_type": ContentType.objects.get_for_model(subject), "object_id": subject.pk}
    changes = Transition.objects.filter(**ref).count()
    return [f"{changes} status changes"] if changes else []


def held_in_regions(**where: object) -> list[str]:
    """The status changes and pending notifications under the regions matching ``where``
    (``regions.models.HELD_ELSEWHERE``, registered by ``AlertsConfig.ready()``)."""
    changes = Transition.objects.filter(**where).count()
    pending = Notification.objects.filter(
        state=Notification.State.PENDING,
        **{f"transition__{key}": value for key, value in where.items()},
    ).count()
    return [
        *([f"{changes} status change{'' if changes == 1 else 's'}"] if changes else []),
        *([f"{pending} pending notification{'' if pending == 1 else 's'}"] if pending else []),
    ]


def changes_in_region(region: Region, start: datetime, end: datetime, limit: int) -> list[tuple]:
    """The region's status changes from ``start`` to ``end``, oldest first, at most ``limit``, as
    rows of (object id, concern, subject label, created, old status, new status, reason), for
    its timeline (``regions.models.TIMELINE_SOURCES``, registered by ``AlertsConfig.ready()``)."""
    return list(
        Transition.objects.filter(region=region, created__gte=start, created__lte=end)
        .order_by("created", "pk")
        .values_list(
            "object_id", "concern", "subject_label", "created",
            "old_status", "new_status", "reason",
        )[:limit]
    )  # fmt: skip


#: Each channel kind's check of a target and secret (``{kind: check(target, secret) ->
#: {field: message}}``), filled from ``integrations.TRANSPORTS`` by ``AlertsConfig.ready()``:
#: the transports import these models, so the models ask them through here.
CHANNEL_KINDS: dict[str, Callable[[str, str], dict[str, str]]] = {}


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


class Cause(models.Model):
    """An incident by cause: subjects failing for one known cause (``lib.status.Cause``)
    share it, and one page; it closes when the last of them recovers (routing.py)."""

    key = models.CharField(max_length=200)
    label = models.CharField(max_length=255)
    region = models.ForeignKey(Region, models.CASCADE, related_name="causes")
    concern = models.CharField(max_length=20)
    status = models.CharField(max_length=10, choices=STATUS_CHOICES)
    opened = models.DateTimeField(default=timezone.now)
    closed = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-opened"]
        constraints = [
            models.UniqueConstraint(
                fields=["key"], condition=Q(closed=None), name="one_open_incident_per_cause"
            )
        ]

    def __str__(self) -> str:
        return f"{self.label}: {self.status} since {self.opened:%Y-%m-%d %H:%M}"

    def get_absolute_url(self) -> str:
        return reverse("alerts:cause", args=[self.pk])

    def members(self) -> list[Incident]:
        """The subjects' incidents, open ones first, each subject once (its latest)."""
        seen: dict[tuple[int, int], Incident] = {}
        for incident in self.incidents.order_by("-opened", "-pk"):
            seen.setdefault((incident.content_type_id, incident.object_id), incident)
        return sorted(seen.values(), key=lambda i: (i.closed is not None, i.subject_label))

    def acknowledge(self, user) -> int:
        """Acknowledge every open incident of its subjects (their reminders and escalations
        stop); how many this call acknowledged."""
        return sum(i.acknowledge(user) for i in self.incidents.filter(closed=None))

    def summary(self) -> str:
        """``5 arrays: host:md1, host:md2, …`` (the open ones; all of them once closed)."""
        members = self.members()
        shown = [m for m in members if m.closed is None] or members
        models_ = {m.content_type.model_class() for m in shown}
        model = next(iter(models_)) if len(models_) == 1 else None
        noun = str(model._meta.verbose_name_plural) if model else "subjects"
        labels = ", ".join(m.subject_label for m in shown[:20])
        more = f" and {len(shown) - 20} more" if len(shown) > 20 else ""
        if len(shown) == 1 and model:
            noun = str(model._meta.verbose_name)
        return f"{len(shown)} {noun}: {labels}{more}"


class Transition(SubjectRef):
    region = models.ForeignKey(Region, models.CASCADE, related_name="transitions")
    old_status = models.CharField(max_length=10, choices=STATUS_CHOICES)
    new_status = models.CharField(max_length=10, choices=STATUS_CHOICES)
    reason = models.TextField()
    figures = models.JSONField(default=dict, blank=True)
    created = models.DateTimeField(default=timezone.now, db_index=True)
    processed = models.DateTimeField(null=True, blank=True)
    # The known cause it failed for (or, a recovery, the cause whose incident it belongs to).
    cause = models.ForeignKey(
        Cause, models.SET_NULL, null=True, blank=True, related_name="transitions"
    )

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
    cause = models.ForeignKey(
        Cause, models.SET_NULL, null=True, blank=True, related_name="incidents"
    )
    # Escalation (routing.queue_escalations): the policy of the rule that routed it, how many
    # of its levels were told, and when the next one is due if nobody acknowledges.
    escalation_policy = models.ForeignKey(
        "EscalationPolicy", models.SET_NULL, null=True, blank=True, related_name="+"
    )
    escalation_level = models.PositiveIntegerField(default=0)
    next_escalation = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-opened"]
        permissions = [
            ("acknowledge_incident", "Can acknowledge an incident"),
            ("annotate_incident", "Can add a note to an incident"),
        ]
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
            ),
            models.Index(fields=["-opened", "-id"], name="incident_newest"),
            models.Index(
                fields=["next_escalation"],
                condition=Q(closed=None, acknowledged=None),
                name="incident_escalation_due",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.subject_label}: {self.status} since {self.opened:%Y-%m-%d %H:%M}"

    def get_absolute_url(self) -> str:
        return reverse("alerts:incident", args=[self.pk])

    def acknowledge(self, user) -> bool:
        """Acknowledge it if open and not yet: reminders and the escalation stop (until it
        gets worse). In its timeline. Whether this call acknowledged it."""
        now = timezone.now()
        won = Incident.objects.filter(pk=self.pk, closed=None, acknowledged=None).update(
            acknowledged=now, acknowledged_by=user
        )
        if won:
            self.acknowledged, self.acknowledged_by = now, user
            IncidentEvent.objects.create(
                incident=self, kind=IncidentEvent.Kind.ACKNOWLEDGED, user=user, created=now
            )
        return bool(won)

    def add_note(self, user, text: str) -> IncidentEvent:
        """An operator's note: what was tried, by whom. In its timeline and the audit trail."""
        return IncidentEvent.objects.create(
            incident=self, kind=IncidentEvent.Kind.NOTE, user=user, text=text.strip()
        )


#: The longest note (characters): a page of what was tried, not a log file.
NOTE_MAX = 4000


class IncidentEvent(models.Model):
    """A step of an incident's timeline that is not a status change (those are its
    transitions): an escalation, an acknowledgement, a note."""

    class Kind(models.TextChoices):
        ESCALATED = "escalated", "Escalated"
        ACKNOWLEDGED = "acknowledged", "Acknowledged"
        NOTE = "note", "Note"

    incident = models.ForeignKey(Incident, models.CASCADE, related_name="events")
    kind = models.CharField(max_length=15, choices=Kind.choices)
    text = models.TextField(blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created", "pk"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.created:%Y-%m-%d %H:%M}"


class Channel(KeepsHistory, models.Model):
    """Where alerts go. Each kind is a transport of ``apps.alerts.integrations``.

    ``target`` is email addresses, a webhook's URL or PagerDuty's events URL; of a URL only
    the scheme and host are ever shown (``shown_target``: pages, the API, the audit trail), for
    its path or query may be its credential (Teams, Discord, Google Chat webhooks). ``secret``
    is never shown, logged or returned once saved (a webhook's signing secret, a PagerDuty
    routing key, a Slack incoming-webhook URL, whose path is its credential).
    """

    class Kind(models.TextChoices):
        EMAIL = "email", "Email"
        WEBHOOK = "webhook", "Webhook"
        SLACK = "slack", "Slack"
        PAGERDUTY = "pagerduty", "PagerDuty"

    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.EMAIL)
    target = models.TextField(
        blank=True,
        help_text="Email: addresses, comma-separated. Webhook: the URL. PagerDuty: the Events "
        "API v2 URL (empty: PagerDuty's). Slack: nothing (the webhook URL is the secret).",
    )
    secret = models.CharField(
        max_length=500,
        blank=True,
        help_text="Webhook: the signing secret. PagerDuty: the integration's routing key. "
        "Slack: the incoming-webhook URL. Never shown again once saved.",
    )
    disabled = models.BooleanField(default=False)
    created = models.DateTimeField(default=timezone.now, editable=False)
    last_error = models.TextField(blank=True, editable=False)
    last_error_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_success = models.DateTimeField(null=True, blank=True, editable=False)
    # Vigil's own configuration refused a send (an unverified sender, access denied, a missing
    # configuration set): retried with backoff, shown to admins on every page until a send works.
    config_error = models.TextField(blank=True, editable=False)
    config_error_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["name"]

    disable_hint = "disable it (disabled: true)"

    def __str__(self) -> str:
        return f"{self.name} ({self.get_kind_display()})"

    def get_absolute_url(self) -> str:
        return reverse("alerts:channel", args=[self.pk])

    def deletion_blockers(self) -> list[str]:
        sent = self.notifications.exclude(state=Notification.State.PENDING).count()
        pending = self.notifications.filter(state=Notification.State.PENDING).count()
        return [
            *([f"{sent} notifications sent"] if sent else []),
            *([f"{pending} pending notifications"] if pending else []),
        ]

    @property
    def shown_target(self) -> str:
        """What may be shown of ``target``: a URL's scheme and host, addresses as they are."""
        if self.kind in (self.Kind.WEBHOOK, self.Kind.PAGERDUTY):
            return shown_url(self.target)
        return self.target

    def kept_target(self, given: str) -> str:
        """``given`` from a form or the API: the saved target when it is what was shown of it
        (the masked URL sent back unchanged), else ``given``."""
        if self.pk and self.target and given.strip() == self.shown_target != self.target:
            return self.target
        return given

    @property
    def recipients(self) -> list[str]:
        return [a.strip() for a in self.target.replace(";", ",").split(",") if a.strip()]

    def clean(self) -> None:
        """The kind's own check of target and secret (the page, the admin, the API): a
        ``ValidationError`` per field, in words."""
        check_kind = CHANNEL_KINDS.get(self.kind)
        if check_kind is None:
            errors = {"kind": f"Unknown kind {self.kind!r}: one of {', '.join(CHANNEL_KINDS)}."}
        else:
            errors = check_kind(self.target or "", self.secret or "")
        if errors:
            raise ValidationError(errors)

    def failed_notifications(self) -> models.QuerySet[Notification]:
        """What did not reach someone: failed, or refused by one of its recipients."""
        return self.notifications.filter(
            Q(state=Notification.State.FAILED) | ~Q(refused={})
        ).exclude(state=Notification.State.PENDING)


class EscalationPolicy(models.Model):
    """Who hears of an incident nobody acknowledges: levels of channels, each told once its
    delay after the incident opened has passed unacknowledged ("Slack now; the on-call
    PagerDuty after 10 minutes; the team lead's email after 30"). Attached to rules."""

    name = models.CharField(max_length=100, unique=True)
    created = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "escalation policies"

    def __str__(self) -> str:
        return self.name


class EscalationLevel(models.Model):
    policy = models.ForeignKey(EscalationPolicy, models.CASCADE, related_name="levels")
    delay_minutes = models.FloatField(
        default=0, help_text="After the incident opened, if nobody acknowledged it (0: at once)."
    )
    channels = models.ManyToManyField(Channel, related_name="escalation_levels")

    class Meta:
        ordering = ["policy", "delay_minutes", "pk"]

    def __str__(self) -> str:
        return f"{self.policy}: after {self.delay_minutes:g} min"

    def clean(self) -> None:
        if self.delay_minutes < 0:
            raise ValidationError({"delay_minutes": "A delay is 0 minutes or more."})


#: What people set on a rule (the form; the API adds ``id`` and ``is_default``).
RULE_FIELDS = (
    "name",
    "region",
    "concern",
    "content_type",
    "object_id",
    "min_severity",
    "channels",
    "escalation",
    "enabled",
)


class Rule(models.Model):
    """Who hears what: transitions matching every filter set here go to ``channels``.

    Empty filters match everything; a transition matches when its old or new status is at
    least ``min_severity`` (so the recovery of a critical is sent where the critical went).
    The default rule catches what no other rule routes.
    """

    name = models.CharField(max_length=100)
    region = models.ForeignKey(Region, models.CASCADE, null=True, blank=True)
    concern = models.CharField(max_length=20, blank=True, choices=concerns.choices)
    content_type = models.ForeignKey(ContentType, models.CASCADE, null=True, blank=True)
    object_id = models.PositiveBigIntegerField(null=True, blank=True)
    min_severity = models.CharField(
        max_length=10,
        choices=[(s.value, s.label) for s in Status.ranked() if s is not Status.OK],
        default=Status.WARNING.value,
    )
    channels = models.ManyToManyField(Channel, blank=True, related_name="rules")
    escalation = models.ForeignKey(
        EscalationPolicy,
        models.PROTECT,
        null=True,
        blank=True,
        related_name="rules",
        help_text="Who else hears of an incident it routes if nobody acknowledges it.",
    )
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

    def clean(self) -> None:
        check_scope(self)  # a rule that could never match is not saved

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
    concern = models.CharField(max_length=20, blank=True, choices=concerns.choices)
    content_type = models.ForeignKey(ContentType, models.CASCADE, null=True, blank=True)
    object_id = models.PositiveBigIntegerField(null=True, blank=True)
    starts = models.DateTimeField(default=timezone.now)
    ends = models.DateTimeField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="+")
    comment = models.TextField(blank=True)
    created = models.DateTimeField(default=timezone.now, editable=False)
    # Set once what it held back has been handed to the outbox after it ended (routing.py).
    released = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-ends"]
        indexes = [
            models.Index(fields=["ends"], condition=Q(released=None), name="silence_unreleased")
        ]

    def __str__(self) -> str:
        return f"silence until {self.ends:%Y-%m-%d %H:%M} by {self.author}"

    def clean(self) -> None:
        check_scope(self)

    def matches(self, ref: SubjectRef) -> bool:
        return (
            (not self.region_id or self.region_id == ref.region_id)
            and (not self.concern or self.concern == ref.concern)
            and (
                not self.content_type_id
                or (self.content_type_id, self.object_id) == (ref.content_type_id, ref.object_id)
            )
        )


class MaintenanceWindow(models.Model):
    """Recurring maintenance: every week on ``days`` from ``start`` (local time in
    ``time_zone``) for ``minutes``, what it matches is held back as by a silence, and what is
    still failing when an occurrence closes is sent then (routing.release_windows).

    It matches by region, concern, subject and failure domain (``cause_key``: the key of the
    cause subjects fail for, e.g. ``raid/3/domain/storage-b``); empty fields match everything.
    """

    name = models.CharField(max_length=100)
    region = models.ForeignKey(Region, models.CASCADE, null=True, blank=True)
    concern = models.CharField(max_length=20, blank=True, choices=concerns.choices)
    content_type = models.ForeignKey(ContentType, models.CASCADE, null=True, blank=True)
    object_id = models.PositiveBigIntegerField(null=True, blank=True)
    cause_key = models.CharField(
        "failure domain",
        max_length=200,
        blank=True,
        help_text="A cause's key (an incident by cause's page shows it), e.g. "
        "raid/3/domain/storage-b: subjects failing for it are held.",
    )
    days = models.JSONField(
        default=list, blank=True, help_text="Weekdays, 0 (Monday) to 6 (Sunday), e.g. [6]."
    )
    start = models.TimeField(
        null=True, blank=True, help_text="Local time in the window's time zone (weekly)."
    )
    cron = models.CharField(
        max_length=100,
        blank=True,
        help_text="Instead of weekdays and a start: five cron fields (minute hour day-of-month "
        'month day-of-week) in the window\'s time zone, e.g. "0 2 1-7 * sun" (the first '
        "Sunday of each month at 02:00).",
    )
    minutes = models.PositiveIntegerField(help_text="How long each occurrence lasts.")
    time_zone = models.CharField(max_length=64, default="UTC", help_text="e.g. Europe/Berlin")
    enabled = models.BooleanField(default=True)
    comment = models.TextField(blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created = models.DateTimeField(default=timezone.now, editable=False)
    # The close of the latest occurrence whose held-back alerts were released.
    released_until = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def schedule(self) -> schedule.Weekly | schedule.Cron:
        """When it opens: its cron rule, or its weekdays and start."""
        if self.cron:
            return schedule.Cron(self.cron, self.minutes, self.time_zone)
        return schedule.Weekly(
            frozenset(self.days or ()), self.start or time(0), self.minutes, self.time_zone
        )

    def clean(self) -> None:
        days = self.days if isinstance(self.days, list) else []
        errors = schedule.check(days, self.minutes or 0, self.time_zone, self.cron.strip())
        if not self.cron.strip() and self.start is None:
            errors["start"] = "A weekly window needs its start (local time)."
        if errors:
            raise ValidationError(errors)
        self.cron = " ".join(self.cron.split())
        check_scope(self)

    @classmethod
    def in_region(cls, region: Region, start: datetime, end: datetime) -> list[tuple[str, list]]:
        """The enabled windows that apply to ``region``'s subjects, each as (its name and what
        it holds, its occurrences from ``start`` to ``end``), for the region's timeline: a
        window of this region or of every region; of one subject, if that subject is here; of
        a failure domain, if a cause of that key was ever here."""
        found = []
        windows = cls.objects.filter(enabled=True).filter(Q(region=region) | Q(region=None))
        for window in windows.order_by("name", "pk"):
            held = concerns.label_of(window.concern) if window.concern else "everything"
            if window.content_type_id:
                subject = subject_of(window.content_type_id, window.object_id)
                if subject is None or subject.region_id != region.pk:
                    continue
                held = str(subject)
            if window.cause_key:
                if not Cause.objects.filter(key=window.cause_key, region=region).exists():
                    continue
                held = f"{held}, failing for {window.cause_key}"
            occurrences = window.schedule.between(start, end)
            if occurrences:
                found.append((f"{window.name} ({held})", occurrences))
        return found

    def matches(self, ref: SubjectRef) -> bool:
        return (
            (not self.region_id or self.region_id == ref.region_id)
            and (not self.concern or self.concern == ref.concern)
            and (
                not self.content_type_id
                or (self.content_type_id, self.object_id) == (ref.content_type_id, ref.object_id)
            )
            and (
                not self.cause_key
                or (getattr(ref, "cause_id", None) and ref.cause.key == self.cause_key)
            )
        )


class Dependency(models.Model):
    """Declared by an admin where Vigil cannot know the cause (Alertmanager's inhibition
    rules): ``subject`` depends on ``upstream`` (a probe target on a Galera cluster). While the
    upstream has an open incident, the subject's failure joins it as an incident by cause,
    held back (inhibited) from the channels told of the upstream; the upstream's recovery
    sends what of its dependents still fails (routing.py)."""

    content_type = models.ForeignKey(ContentType, models.CASCADE, related_name="+")
    object_id = models.PositiveBigIntegerField()
    upstream_type = models.ForeignKey(ContentType, models.CASCADE, related_name="+")
    upstream_id = models.PositiveBigIntegerField()
    comment = models.TextField(blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["pk"]
        verbose_name_plural = "dependencies"
        constraints = [
            models.UniqueConstraint(
                fields=["content_type", "object_id", "upstream_type", "upstream_id"],
                name="one_dependency_per_pair",
            )
        ]

    def __str__(self) -> str:
        subject = subject_of(self.content_type_id, self.object_id)
        upstream = subject_of(self.upstream_type_id, self.upstream_id)
        return f"{subject or self.object_id} depends on {upstream or self.upstream_id}"

    def clean(self) -> None:
        errors = {}
        if not self.content_type_id or subject_of(self.content_type_id, self.object_id) is None:
            errors["object_id"] = "No such monitored subject."
        if not self.upstream_type_id or subject_of(self.upstream_type_id, self.upstream_id) is None:
            errors["upstream_id"] = "No such monitored subject."
        if (self.content_type_id, self.object_id) == (self.upstream_type_id, self.upstream_id):
            errors["upstream_id"] = "A subject cannot depend on itself."
        elif not errors and (self.content_type_id, self.object_id) in Dependency.upstreams_of(
            self.upstream_type_id, self.upstream_id, excluding=self.pk
        ):
            errors["upstream_id"] = (
                f"{subject_of(self.upstream_type_id, self.upstream_id)} already depends on "
                f"{subject_of(self.content_type_id, self.object_id)}, directly or through "
                "others: this would make a circle."
            )
        if errors:
            raise ValidationError(errors)

    #: How deep a chain of dependencies is followed (a bound; cycles are refused on save).
    MAX_DEPTH = 20

    @classmethod
    def upstreams_of(
        cls, content_type_id: int, object_id: int, excluding: int | None = None
    ) -> list[tuple[int, int]]:
        """Every subject ``(content type, id)`` depends on, directly or through others (A on
        B on C: B, then C), nearest first; ``excluding`` a dependency (the one being edited)."""
        found: list[tuple[int, int]] = []
        seen = {(content_type_id, object_id)}
        level = [(content_type_id, object_id)]
        for _ in range(cls.MAX_DEPTH):
            if not level:
                break
            match = Q(pk__in=[])
            for type_id, pk in level:
                match |= Q(content_type_id=type_id, object_id=pk)
            rows = cls.objects.filter(match).exclude(pk=excluding)
            level = []
            for pair in rows.order_by("pk").values_list("upstream_type_id", "upstream_id"):
                if pair not in seen:
                    seen.add(pair)
                    found.append(pair)
                    level.append(pair)
        return found


class Notification(models.Model):
    """The outbox: one row per transition (or reminder of it) per channel."""

    class Kind(models.TextChoices):
        TRANSITION = "transition", "Status change"
        REMINDER = "reminder", "Reminder"
        FLAPPING = "flapping", "Flapping summary"
        UNDELIVERABLE = "undeliverable", "Not delivered elsewhere"
        ESCALATION = "escalation", "Escalation"
        TEST = "test", "Test message"  # a channel's "Send a test": never saved (alerts.trial)

    class Failure(models.TextChoices):
        RECIPIENT = "recipient", "The recipient refused it (not retried)"
        CONFIGURATION = "configuration", "Vigil's configuration (retried)"
        TRANSIENT = "transient", "Transient (retried)"

    class State(models.TextChoices):
        PENDING = "pending", "Waiting to be sent"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed permanently"
        SILENCED = "silenced", "Silenced"
        SUPPRESSED = "suppressed", "Suppressed while flapping"
        INHIBITED = "inhibited", "Held: its cause's incident was sent"

    transition = models.ForeignKey(Transition, models.CASCADE, related_name="notifications")
    channel = models.ForeignKey(Channel, models.CASCADE, related_name="notifications")
    kind = models.CharField(max_length=15, choices=Kind.choices, default=Kind.TRANSITION)
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
    # Per recipient, so one bad address fails alone and a retry skips who already has it.
    delivered = models.JSONField(default=list, blank=True)
    refused = models.JSONField(default=dict, blank=True, help_text="recipient: why")
    failure = models.CharField(max_length=15, choices=Failure.choices, blank=True)
    # The undeliverable check handed it to another channel of the default rule (routing.py).
    escalated = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        permissions = [("resend_notification", "Can send a notification again")]
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


track(
    Channel,
    exclude=["last_error", "last_error_at", "last_success", "config_error", "config_error_at"],
    secrets=["secret"],
    urls=["target"],
)
track(Rule, m2m=["channels"])
track(Silence, exclude=["released"])
track(IncidentEvent)
track(EscalationPolicy)
track(MaintenanceWindow, exclude=["released_until"])
track(EscalationLevel, m2m=["channels"])


class SentMessage(models.Model):
    """An email as it left Vigil, kept in demo mode for the "Sent messages" page
    (``apps.alerts.mailbox.OneLineBackend``): what on-call would get, without a mail server."""

    to = models.TextField()
    subject = models.CharField(max_length=998)
    text = models.TextField(blank=True)
    html = models.TextField(blank=True)
    created = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created", "-pk"]

    def __str__(self) -> str:
        return f"{self.to}: {self.subject}"


track(Dependency)

"""AWS accounts, their regions, and named sites outside AWS (shown like regions)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import timedelta

from django.apps import apps as django_apps
from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models, transaction
from django.db.models import Q
from django.utils import timezone

from apps.accounts.audit import track
from apps.lib import leases
from apps.lib.aws import AccountAccess
from apps.lib.keep import KeepsHistory
from apps.lib.status import Status

from .concerns import NOT_COLLECTED
from .ec2 import RegionInfo, region_name

STATUS_CHOICES = [(s.value, s.label) for s in Status]
RETRY_FAILED_DISCOVERY = timedelta(minutes=5)


class Account(KeepsHistory, models.Model):
    name = models.CharField(max_length=100, unique=True)
    role_arn = models.CharField(
        "role ARN",
        max_length=2048,
        blank=True,
        help_text="A role to assume on top of the default credential chain; empty to use the chain.",
        validators=[RegexValidator(r"^arn:aws[a-z-]*:iam::\d{12}:role/.+$", "Not an IAM role ARN")],
    )
    external_id = models.CharField(
        "external id", max_length=1224, blank=True, help_text="Sent when assuming the role."
    )
    home_region = models.CharField(
        max_length=50, default="us-east-1", help_text="Where region discovery calls go."
    )
    is_demo = models.BooleanField(default=False, editable=False)
    enabled = models.BooleanField(default=True)
    created = models.DateTimeField(default=timezone.now, editable=False)
    discovered = models.DateTimeField(null=True, blank=True, editable=False)
    next_discovery = models.DateTimeField(default=timezone.now, editable=False)
    last_error = models.TextField(blank=True, editable=False)
    last_error_at = models.DateTimeField(null=True, blank=True, editable=False)
    lease_until = models.DateTimeField(null=True, blank=True, editable=False)

    disable_hint = "turn it off (enabled: false)"

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def deletion_blockers(self) -> list[str]:
        return history_held(region__account=self)

    @property
    def access(self) -> AccountAccess:
        return AccountAccess(
            role_arn=self.role_arn, external_id=self.external_id, demo=self.is_demo
        )

    @classmethod
    def claim_due_discoveries(cls, now: timezone.datetime) -> list[int]:
        """Accounts due for discovery, each claimed by compare-and-set so one tick sends it."""
        interval = timedelta(minutes=settings.VIGIL_DISCOVERY_INTERVAL_MINUTES)
        due = cls.objects.filter(enabled=True)
        return leases.claim_due(due, now, interval, field="next_discovery")

    def discovery_failed(self, message: str) -> None:
        now = timezone.now()
        Account.objects.filter(pk=self.pk).update(
            last_error=message, last_error_at=now, next_discovery=now + RETRY_FAILED_DISCOVERY
        )

    @transaction.atomic
    def discovery_succeeded(self, found: Iterable[RegionInfo]) -> None:
        existing = {r.code: r for r in self.regions.all()}
        for info in found:
            region = existing.get(info.code)
            if region is None:
                Region.objects.create(
                    account=self,
                    code=info.code,
                    name=region_name(info.code),
                    opt_in_status=info.opt_in_status,
                    enabled=info.usable,
                )
            elif region.opt_in_status != info.opt_in_status:
                region.opt_in_status = info.opt_in_status
                region.save(update_fields=["opt_in_status"])
        Account.objects.filter(pk=self.pk).update(
            discovered=timezone.now(), last_error="", last_error_at=None
        )


class RegionQuerySet(models.QuerySet):
    def shown(self) -> RegionQuerySet:
        """Regions on the dashboard: enabled regions the account can use, and sites.

        A site may belong to an account (the demo account's sites do) and is then hidden with it.
        """
        usable = Q(opt_in_status__in=RegionInfo.USABLE)
        site = Q(kind=Region.Kind.SITE) & (Q(account__isnull=True) | Q(account__enabled=True))
        return self.filter(enabled=True).filter(site | (usable & Q(account__enabled=True)))


class Region(KeepsHistory, models.Model):
    class Kind(models.TextChoices):
        AWS = "aws", "AWS region"
        SITE = "site", "Site"

    class OptIn(models.TextChoices):
        NOT_REQUIRED = "opt-in-not-required", "Enabled by default"
        OPTED_IN = "opted-in", "Opted in"
        NOT_OPTED_IN = "not-opted-in", "Not opted in"
        ENABLING = "enabling", "Opt-in in progress"
        DISABLING = "disabling", "Opt-out in progress"

    account = models.ForeignKey(
        Account, models.CASCADE, null=True, blank=True, related_name="regions"
    )
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.AWS)
    code = models.CharField(max_length=50, help_text="AWS region code, or a short name for a site.")
    name = models.CharField(max_length=100, blank=True)
    opt_in_status = models.CharField(max_length=30, choices=OptIn.choices, blank=True)
    enabled = models.BooleanField(default=True, help_text="Monitor and show this region.")
    created = models.DateTimeField(default=timezone.now, editable=False)
    lease_until = models.DateTimeField(null=True, blank=True, editable=False)

    objects = RegionQuerySet.as_manager()

    class Meta:
        ordering = ["kind", "code"]
        constraints = [
            models.UniqueConstraint(
                fields=["account", "code"], name="region_code_unique_per_account"
            ),
            models.UniqueConstraint(
                fields=["code"], condition=Q(account__isnull=True), name="site_code_unique"
            ),
        ]

    disable_hint = "turn it off (enabled: false)"

    def __str__(self) -> str:
        if self.kind == self.Kind.SITE:
            return self.name or self.code
        return f"{self.code} ({self.account})"

    def deletion_blockers(self) -> list[str]:
        return history_held(region=self)

    @property
    def is_opt_in(self) -> bool:
        return self.opt_in_status in {self.OptIn.OPTED_IN, self.OptIn.ENABLING}


class Subject(models.Model):
    """What every monitored thing has (the status contract in docs/architecture.md).

    A file system, a cluster, an array or a probe target subclasses this. Its status changes
    only through ``apps.alerts.record()``, which writes the change once as a transition.
    ``lease_until`` is for ``apps.lib.leases``: one collection of a subject at a time.
    """

    concern: str = ""  # "efs", "galera", ...: set on each subclass

    region = models.ForeignKey(Region, models.CASCADE, related_name="%(app_label)s_%(class)ss")
    status = models.CharField(max_length=10, choices=STATUS_CHOICES, default=Status.UNKNOWN.value)
    reason = models.TextField(blank=True, default=NOT_COLLECTED)
    status_changed = models.DateTimeField(null=True, blank=True, editable=False)
    lease_until = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        abstract = True

    @property
    def status_enum(self) -> Status:
        return Status(self.status)


class Threshold(models.Model):
    """One threshold a person set over the global default (``apps.regions.thresholds``): for
    one subject of a concern (``subject_id``, its primary key), or for all the concern's
    subjects in the region (no ``subject_id``). Every change is in the audit trail."""

    region = models.ForeignKey(Region, models.CASCADE, related_name="thresholds")
    concern = models.CharField(max_length=20)
    subject_id = models.PositiveBigIntegerField(null=True, blank=True)
    name = models.CharField(max_length=50)
    value = models.FloatField()
    changed = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["region", "concern", "subject_id", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["region", "concern", "subject_id", "name"],
                name="threshold_once_per_subject",
            ),
            models.UniqueConstraint(
                fields=["region", "concern", "name"],
                condition=Q(subject_id__isnull=True),
                name="threshold_once_per_region",
            ),
        ]

    def __str__(self) -> str:
        whose = f"{self.concern} #{self.subject_id}" if self.subject_id else self.concern
        return f"{whose} in {self.region.code}: {self.name} = {self.value:g}"


track(
    Account,
    exclude=["discovered", "next_discovery", "last_error", "last_error_at", "lease_until"],
    secrets=["external_id"],
)
track(Region, exclude=["opt_in_status", "lease_until"])
track(Threshold)


def _counted(count: int, noun: str) -> list[str]:
    return [f"{count} {noun}{'' if count == 1 else 's'}"] if count else []


#: What other apps keep under regions, by app label: ``held(**where) -> ["3 status
#: changes", ...]``, ``where`` a region lookup (``region=`` or ``region__account=``). The alerts
#: app adds its status changes and pending notifications in its ``ready()``: it sits above
#: regions, so regions asks it through here rather than importing it.
HELD_ELSEWHERE: dict[str, Callable[..., list[str]]] = {}

#: What the region timeline draws, asked of the alerts app in the same way (its ``ready()`` fills
#: it): ``changes(region, start, end, limit)``, the status changes as rows of (object id, concern,
#: subject label, created, old status, new status, reason), oldest first; ``windows(region,
#: start, end)``, the maintenance windows that apply, each with its occurrences.
TIMELINE_SOURCES: dict[str, Callable[..., list[tuple]]] = {}


def history_held(**where: object) -> list[str]:
    """What the regions matching ``where`` hold: monitored subjects of every concern, and what
    other apps keep under them (``HELD_ELSEWHERE``: status changes, emails not sent yet)
    (``apps.lib.keep``)."""
    subjects = sum(
        model._default_manager.filter(**where).count()
        for model in django_apps.get_models()
        if issubclass(model, Subject)
    )
    held = [h for count in HELD_ELSEWHERE.values() for h in count(**where)]
    return [*_counted(subjects, "monitored subject"), *held]

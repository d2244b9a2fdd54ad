"""Keep-alive probe targets (subjects with a status) and the history of their measurements."""

from __future__ import annotations

from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import OuterRef, Q, Subquery
from django.urls import reverse
from django.utils import timezone

from apps.accounts.audit import SUBJECT_FIELDS, track
from apps.alerts.models import subject_history
from apps.lib import leases, outbound
from apps.lib.keep import KeepsHistory
from apps.lib.status import Status, Verdict
from apps.regions import thresholds as region_thresholds
from apps.regions.models import STATUS_CHOICES, Region, Subject

from .keepalive import DEFAULT_CAP_S, Measurement, ProbeSpec
from .verdict import Thresholds, probe_verdict

MAX_CAP_S = 3600.0  # the Celery task's time limit is derived from this (tasks.py)
MAX_TIMEOUT_S = 60.0
LEASE_MARGIN_S = 60.0
#: What people set on a target (the admin and the API; the form orders them its own way).
TARGET_FIELDS = (
    "name",
    "url",
    "region",
    "interval_s",
    "expected_min_s",
    "expected_max_s",
    "cap_s",
    "timeout_s",
    "verify_tls",
    "enabled",
    "next_due",
)


def validate_http_url(value: str) -> None:
    """Only http:// and https:// (the URL field's own validator checks the rest)."""
    if urlsplit(value).scheme not in ("http", "https"):
        raise ValidationError("Only http:// and https:// URLs can be probed.")


def thresholds() -> Thresholds:
    """The global defaults, from settings (a region or a target may set its own)."""
    return Thresholds(
        tolerance_s=settings.VIGIL_PROBES_DRIFT_TOLERANCE_S,
        cert_warn_days=settings.VIGIL_PROBES_CERT_WARN_DAYS,
    )


class Target(KeepsHistory, Subject):
    """One URL whose idle keep-alive timeout is measured every ``interval_s``."""

    concern = "probes"

    name = models.CharField(max_length=100, blank=True, help_text="Empty to show the URL.")
    url = models.URLField(
        "URL",
        max_length=2000,
        validators=[validate_http_url, outbound.validate_url_host],
    )
    interval_s = models.PositiveIntegerField(
        "interval (s)",
        default=900,
        validators=[MinValueValidator(60)],
        help_text="How often to probe, in seconds.",
    )
    expected_min_s = models.FloatField(
        "expected keep-alive from (s)",
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text="Warn when the idle timeout is outside this range; empty for no check.",
    )
    expected_max_s = models.FloatField(
        "expected keep-alive to (s)", null=True, blank=True, validators=[MinValueValidator(0)]
    )
    cap_s = models.FloatField(
        "cap (s)",
        default=DEFAULT_CAP_S,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_CAP_S)],
        help_text="Stop waiting for the server to close after this many idle seconds.",
    )
    timeout_s = models.FloatField(
        "timeout (s)",
        default=10.0,
        validators=[MinValueValidator(0.5), MaxValueValidator(MAX_TIMEOUT_S)],
        help_text="Bound on connecting, and on reading the response.",
    )
    verify_tls = models.BooleanField("verify TLS", default=True)
    enabled = models.BooleanField(default=True)
    next_due = models.DateTimeField(default=timezone.now)
    created = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["name", "url"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(expected_min_s__isnull=True) & Q(expected_max_s__isnull=True))
                | Q(
                    expected_min_s__isnull=False,
                    expected_max_s__isnull=False,
                    expected_min_s__lte=models.F("expected_max_s"),
                ),
                name="probe_expected_range_complete_and_ordered",
                violation_error_message=(
                    "Give both ends of the expected keep-alive range, the first no later than "
                    "the second, or neither."
                ),
            ),
        ]
        indexes = [models.Index(fields=["enabled", "next_due"])]

    disable_hint = "turn it off (enabled: false)"

    def __str__(self) -> str:
        return self.name or self.url

    def deletion_blockers(self) -> list[str]:
        results = self.results.count()
        return [*([f"{results} probe results"] if results else []), *subject_history(self)]

    def get_absolute_url(self) -> str:
        return reverse("probes:target_detail", args=[self.pk])

    def clean(self) -> None:
        """The range in the form's words, on the end to change (which also spares the form the
        database constraint's own message)."""
        low, high = self.expected_min_s, self.expected_max_s
        if (low is None) != (high is None):
            missing = "expected_max_s" if high is None else "expected_min_s"
            raise ValidationError(
                {missing: "Give both ends of the expected keep-alive range, or neither."}
            )
        if low is not None and high is not None and low > high:
            raise ValidationError(
                {"expected_max_s": f"The expected range ends ({high:g} s) before it starts "
                 f"({low:g} s)."}
            )  # fmt: skip

    @property
    def expected_range(self) -> tuple[float, float] | None:
        if self.expected_min_s is None or self.expected_max_s is None:
            return None
        return (self.expected_min_s, self.expected_max_s)

    @property
    def longest_run_s(self) -> float:
        """The longest one probe of this target can take: connect, read, then the cap."""
        return 2 * self.timeout_s + self.cap_s

    def spec(self) -> ProbeSpec:
        return ProbeSpec(
            url=self.url,
            cap_s=self.cap_s,
            timeout_s=self.timeout_s,
            verify_tls=self.verify_tls,
            tag=self.pk,
            policy=outbound.Policy.from_settings(),
        )

    def lease_ttl(self) -> timedelta:
        return timedelta(seconds=self.longest_run_s + LEASE_MARGIN_S)

    @classmethod
    def claim_due(cls, now: datetime) -> list[int]:
        """Enabled targets that are due, each claimed by compare-and-set on ``next_due``."""
        due = cls.objects.filter(enabled=True, region__in=Region.objects.shown())
        return leases.claim_due(due, now)

    @classmethod
    def stale(cls, now: datetime) -> list[Target]:
        """Enabled targets with a status whose probes stopped: nothing saved for two intervals
        plus a whole probe, and none running now (missing data is unknown, not ok)."""
        last = Subquery(
            Result.objects.filter(target=OuterRef("pk")).order_by("-created").values("created")[:1]
        )
        candidates = (
            cls.objects.filter(enabled=True)
            .exclude(status=Status.UNKNOWN.value)
            .exclude(lease_until__gt=now)
            .annotate(last_result=last)
        )
        return [
            t
            for t in candidates
            if t.last_result is None
            or now - t.last_result > timedelta(seconds=2 * t.interval_s + t.longest_run_s + 120)
        ]

    def last_idle_timeout_s(self) -> float | None:
        """The most recent measured idle timeout (the drift rule compares against it)."""
        return (
            self.results.filter(idle_timeout_s__isnull=False)
            .order_by("-created", "-pk")
            .values_list("idle_timeout_s", flat=True)
            .first()
        )

    def judge(self, measurement: Measurement, now: datetime | None = None) -> Verdict:
        return probe_verdict(
            measurement,
            expected_range=self.expected_range,
            previous_idle_s=self.last_idle_timeout_s(),
            thresholds=region_thresholds.for_subject(self, thresholds()),
            now=now or timezone.now(),
        )


class Result(models.Model):
    """One measurement of a target, with the verdict it led to."""

    class ClosedBy(models.TextChoices):
        SERVER = "server", "Server"
        CAP = "cap", "Cap reached"

    target = models.ForeignKey(Target, models.CASCADE, related_name="results")
    created = models.DateTimeField(default=timezone.now, help_text="When the result was saved.")
    started_at = models.DateTimeField(help_text="When the probe started.")
    peer_address = models.CharField(max_length=64, blank=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    idle_timeout_s = models.FloatField(
        null=True,
        blank=True,
        help_text="Close minus end of response; empty at the cap or on failure.",
    )
    closed_by = models.CharField(max_length=10, choices=ClosedBy.choices, blank=True)
    closed_with = models.CharField(max_length=10, blank=True, help_text="fin or reset")
    closed_right_after_response = models.BooleanField(default=False)
    connection_close_announced = models.BooleanField(default=False)
    advertised_timeout_s = models.FloatField(null=True, blank=True)
    advertised_timeout_matched = models.BooleanField(null=True, blank=True)
    reuse_confirmed = models.BooleanField(null=True, blank=True)
    cap_s = models.FloatField()
    dns_s = models.FloatField(null=True, blank=True)
    connect_s = models.FloatField(null=True, blank=True)
    tls_s = models.FloatField(null=True, blank=True)
    first_byte_s = models.FloatField(null=True, blank=True)
    total_s = models.FloatField(null=True, blank=True)
    tls_expires = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    status = models.CharField(max_length=10, choices=STATUS_CHOICES)
    reason = models.TextField(blank=True)

    class Meta:
        ordering = ["-created", "-pk"]
        # The API's keyset pages: newest first, by target or across the fleet.
        indexes = [
            models.Index(fields=["target", "-created"]),
            models.Index(fields=["-created", "-id"], name="probe_result_newest"),
        ]

    def __str__(self) -> str:
        return f"{self.target} at {self.started_at:%Y-%m-%d %H:%M:%S}"

    @property
    def finished_at(self) -> datetime | None:
        """When the probe ended: the server's close, or the cap (None when it failed)."""
        if self.total_s is None:
            return None
        idle = self.idle_timeout_s if self.idle_timeout_s is not None else self.cap_s
        return self.started_at + timedelta(seconds=self.total_s + idle)

    @classmethod
    def from_measurement(cls, target: Target, m: Measurement, verdict: Verdict) -> Result:
        return cls(
            target=target,
            started_at=m.started_at,
            peer_address=m.peer_address or "",
            status_code=m.status_code,
            idle_timeout_s=m.idle_timeout_s,
            closed_by=m.closed_by or "",
            closed_with=m.closed_with or "",
            closed_right_after_response=m.closed_right_after_response,
            connection_close_announced=m.connection_close_announced,
            advertised_timeout_s=m.advertised_timeout_s,
            advertised_timeout_matched=m.advertised_timeout_matched,
            reuse_confirmed=m.reuse_confirmed,
            cap_s=m.cap_s,
            dns_s=m.dns_s,
            connect_s=m.connect_s,
            tls_s=m.tls_s,
            first_byte_s=m.first_byte_s,
            total_s=m.total_s,
            tls_expires=m.tls_expires,
            error=m.error or "",
            status=verdict.status.value,
            reason=verdict.reason,
        )


track(Target, exclude=[*SUBJECT_FIELDS, "next_due"])

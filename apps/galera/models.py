"""Galera clusters (subjects with a status), their nodes, and one snapshot per poll.

A node's password is never stored: ``password_env`` names an environment variable and
``password_file`` a file (a Docker/Kubernetes secret) that holds it; it is read when the
node is polled.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.utils import timezone

from apps.lib import leases
from apps.regions.models import STATUS_CHOICES, Region, Subject

POLL_LEASE = timedelta(seconds=60)
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
PASSWORD_ENV_PREFIX = "GALERA_"


def validate_password_env(value: str) -> None:
    """Only ``GALERA_*`` variables: a node must not send the worker's other secrets
    (AWS keys, SECRET_KEY) as a password to a host of its choice. ``VIGIL_*`` names would
    not do either: the settings refuse to start with a ``VIGIL_*`` variable they do not know.
    """
    if not ENV_NAME.match(value):
        raise ValidationError(f"{value!r} is not an environment variable name.")
    if not value.startswith(PASSWORD_ENV_PREFIX) or value == PASSWORD_ENV_PREFIX:
        raise ValidationError(
            f"The variable's name must start with {PASSWORD_ENV_PREFIX}, e.g. GALERA_PROD_PASSWORD."
        )


def secrets_path(value: str) -> Path:
    """The password file, which must lie inside ``VIGIL_GALERA_SECRETS_DIR``."""
    root = Path(settings.VIGIL_GALERA_SECRETS_DIR).resolve()
    path = (root / value).resolve()
    if not path.is_relative_to(root):
        raise ValidationError(f"The password file must be inside {root}.")
    return path


def validate_password_file(value: str) -> None:
    secrets_path(value)


class PasswordUnavailable(Exception):
    """The environment variable or secrets file named by a node cannot be read."""


class Cluster(Subject):
    """One Galera cluster, polled every ``interval_s`` through its nodes' SQL ports."""

    concern = "galera"

    name = models.CharField(max_length=100)
    expected_data_nodes = models.PositiveSmallIntegerField(
        default=3, validators=[MinValueValidator(1)], help_text="Data nodes it should have."
    )
    expected_arbitrators = models.PositiveSmallIntegerField(
        default=0, help_text="garbd arbitrators it should have."
    )
    interval_s = models.PositiveIntegerField(
        "interval (s)", default=60, validators=[MinValueValidator(10)]
    )
    enabled = models.BooleanField(default=True)
    is_demo = models.BooleanField(
        default=False, editable=False, help_text="Fed from recorded samples, never polled."
    )
    next_due = models.DateTimeField(default=timezone.now)
    created = models.DateTimeField(default=timezone.now, editable=False)
    # The last poll, summarised (the snapshots hold the history).
    polled_at = models.DateTimeField(null=True, blank=True, editable=False)
    cluster_size = models.PositiveSmallIntegerField(null=True, blank=True, editable=False)
    primary = models.BooleanField(null=True, blank=True, editable=False)
    data_nodes = models.PositiveSmallIntegerField(null=True, blank=True, editable=False)
    arbitrators = models.PositiveSmallIntegerField(null=True, blank=True, editable=False)
    one_by_one = models.PositiveSmallIntegerField(null=True, blank=True, editable=False)
    simultaneous = models.PositiveSmallIntegerField(null=True, blank=True, editable=False)
    flow_control_paused = models.FloatField(null=True, blank=True, editable=False)
    suspect_timeout_s = models.FloatField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["region", "name"], name="galera_cluster_unique_name")
        ]
        indexes = [models.Index(fields=["enabled", "next_due"])]

    def __str__(self) -> str:
        return self.name

    @property
    def expected_size(self) -> int:
        return self.expected_data_nodes + self.expected_arbitrators

    @classmethod
    def claim_due(cls, now: datetime) -> list[int]:
        """Enabled clusters that are due, each claimed by compare-and-set on ``next_due``."""
        due = cls.objects.filter(enabled=True, region__in=Region.objects.shown())
        return leases.claim_due(due, now)


class Node(models.Model):
    """A data node of a cluster, polled over MySQL (garbd has no SQL port: not a Node)."""

    cluster = models.ForeignKey(Cluster, models.CASCADE, related_name="nodes")
    name = models.CharField(max_length=100, blank=True, help_text="Empty to show host:port.")
    host = models.CharField(max_length=255)
    port = models.PositiveIntegerField(default=3306)
    user = models.CharField(max_length=80, default="vigil_monitor")
    password_env = models.CharField(
        "password environment variable",
        max_length=100,
        blank=True,
        validators=[validate_password_env],
        help_text="Name of the environment variable (GALERA_...) that holds the password.",
    )
    password_file = models.CharField(
        max_length=500,
        blank=True,
        validators=[validate_password_file],
        help_text="Or: a file in VIGIL_GALERA_SECRETS_DIR that holds the password.",
    )
    tls = models.BooleanField("TLS", default=False)
    tls_ca = models.CharField("TLS CA file", max_length=500, blank=True)
    tls_verify = models.BooleanField("verify TLS certificate", default=True)
    recorded_sample = models.CharField(
        max_length=100, blank=True, editable=False, help_text="Demo: a file in demo_samples/."
    )
    # The last poll of this node.
    state = models.CharField(max_length=20, blank=True, editable=False)
    detail = models.TextField(blank=True, editable=False)

    class Meta:
        ordering = ["cluster", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "host", "port"], name="galera_node_unique")
        ]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        return self.name or f"{self.host}:{self.port}"

    def clean(self) -> None:
        if self.password_env and self.password_file:
            raise ValidationError("Give the password's environment variable or its file, not both.")

    def password(self) -> str:
        """The password from the environment or the secrets file; "" when neither is named."""
        try:
            if self.password_env:
                validate_password_env(self.password_env)
            if self.password_file:
                path = secrets_path(self.password_file)
        except ValidationError as error:
            raise PasswordUnavailable(" ".join(error.messages)) from None
        if self.password_env:
            value = os.environ.get(self.password_env)
            if value is None:
                raise PasswordUnavailable(f"environment variable {self.password_env} is not set")
            return value
        if self.password_file:
            try:
                return path.read_text().rstrip("\r\n")
            except OSError as error:
                reason = error.strerror or type(error).__name__
                raise PasswordUnavailable(f"password file {self.password_file}: {reason}") from None
        return ""

    def ssl(self) -> dict[str, Any] | None:
        if not self.tls:
            return None
        options: dict[str, Any] = {
            "check_hostname": self.tls_verify,
            "verify_mode": self.tls_verify,
        }
        if self.tls_ca:
            options["ca"] = self.tls_ca
        return options


class Snapshot(models.Model):
    """What one poll of a cluster saw, for the size history and the growth rules."""

    cluster = models.ForeignKey(Cluster, models.CASCADE, related_name="snapshots")
    created = models.DateTimeField(default=timezone.now, db_index=True)  # for the retention
    status = models.CharField(max_length=10, choices=STATUS_CHOICES)
    reason = models.TextField(blank=True)
    cluster_size = models.PositiveSmallIntegerField(null=True, blank=True)
    primary = models.BooleanField(null=True, blank=True)
    data_nodes = models.PositiveSmallIntegerField(null=True, blank=True)
    arbitrators = models.PositiveSmallIntegerField(null=True, blank=True)
    one_by_one = models.PositiveSmallIntegerField(null=True, blank=True)
    simultaneous = models.PositiveSmallIntegerField(null=True, blank=True)
    split_brain = models.BooleanField(
        default=False, help_text="The nodes' views disagreed on this poll (confirmed or not)."
    )
    flow_control_paused = models.FloatField(null=True, blank=True)
    # {label: {state, detail, local_state_comment, recv_queue_avg, send_queue_avg, ...}}
    nodes = models.JSONField(default=dict)

    class Meta:
        ordering = ["-created", "-pk"]
        indexes = [models.Index(fields=["cluster", "-created"])]

    def __str__(self) -> str:
        return f"{self.cluster} at {self.created:%Y-%m-%d %H:%M:%S}"

"""Galera clusters (subjects with a status), their nodes, and one snapshot per poll.

A node's password is never stored: ``password_env`` names an environment variable and
``password_file`` a file (a Docker/Kubernetes secret) that holds it; it is read when the
node is polled. A node whose host or port changes forgets both, unless the same change gives
one again (``Node.password_given``): a password must not follow a node to a new host.
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
from django.urls import reverse
from django.utils import timezone

from apps.accounts.audit import SUBJECT_FIELDS, track
from apps.alerts.models import subject_history
from apps.lib import leases, outbound
from apps.lib.keep import KeepsHistory
from apps.lib.pushtoken import PushTokenHolder
from apps.regions.models import STATUS_CHOICES, Region, Subject

from .secretsdir import shares_secrets

POLL_LEASE = timedelta(seconds=60)
TOKEN_PREFIX = "vgn_"
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
PASSWORD_ENV_PREFIX = "GALERA_"
#: What people set on a cluster (the form, the admin and the API).
CLUSTER_FIELDS = (
    "name", "region", "expected_data_nodes", "expected_arbitrators", "interval_s", "enabled",
)  # fmt: skip
#: What a poll's snapshot and its cluster both keep of it.
SUMMARY_FIELDS = (
    "cluster_size",
    "primary",
    "data_nodes",
    "arbitrators",
    "one_by_one",
    "simultaneous",
    "flow_control_paused",
    "flow_control_paused_share",
    "recv_queue",
    "send_queue",
    "cluster_weight",
    "cert_failures_per_minute",
)
#: The last poll, summarised on the cluster; written by workers, never by people.
POLLED_FIELDS = ("polled_at", *SUMMARY_FIELDS, "suspect_timeout_s")


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


def secrets_dir_problem() -> str | None:
    """Why ``VIGIL_GALERA_SECRETS_DIR`` may not be used, or None (``secretsdir``)."""
    shared = shares_secrets(settings.VIGIL_GALERA_SECRETS_DIR, os.environ, os.path.expanduser("~"))
    if not shared:
        return None
    return (
        f"VIGIL_GALERA_SECRETS_DIR ({settings.VIGIL_GALERA_SECRETS_DIR}) must be a directory "
        f"of Galera passwords only, but it holds or lies in: {', '.join(shared)}"
    )


def secrets_path(value: str) -> Path:
    """The password file, which must lie inside ``VIGIL_GALERA_SECRETS_DIR``, a directory that
    holds no other secret."""
    problem = secrets_dir_problem()
    if problem:
        raise ValidationError(problem)
    root = Path(settings.VIGIL_GALERA_SECRETS_DIR).resolve()
    path = (root / value).resolve()
    if not path.is_relative_to(root):
        raise ValidationError(f"The password file must be inside {root}.")
    return path


def validate_password_file(value: str) -> None:
    secrets_path(value)


class PasswordUnavailable(Exception):
    """The environment variable or secrets file named by a node cannot be read.

    Its message goes into the node's ``detail``, which viewers read: it says what is wrong
    without the reference (the variable's or file's name is write-only everywhere else);
    ``reference`` names it, for the worker's log."""

    def __init__(self, message: str, reference: str) -> None:
        super().__init__(message)
        self.reference = reference


class Cluster(KeepsHistory, Subject):
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
    flow_control_paused_share = models.FloatField(null=True, blank=True, editable=False)
    recv_queue = models.PositiveIntegerField(null=True, blank=True, editable=False)
    send_queue = models.PositiveIntegerField(null=True, blank=True, editable=False)
    cluster_weight = models.PositiveIntegerField(null=True, blank=True, editable=False)
    suspect_timeout_s = models.FloatField(null=True, blank=True, editable=False)
    cert_failures_per_minute = models.FloatField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["region", "name"], name="galera_cluster_unique_name")
        ]
        indexes = [models.Index(fields=["enabled", "next_due"])]

    disable_hint = "turn it off (enabled: false)"

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("galera:cluster_detail", args=[self.pk])

    def deletion_blockers(self) -> list[str]:
        snapshots = self.snapshots.count()
        return [*([f"{snapshots} poll snapshots"] if snapshots else []), *subject_history(self)]

    @property
    def expected_size(self) -> int:
        return self.expected_data_nodes + self.expected_arbitrators

    @classmethod
    def claim_due(cls, now: datetime) -> list[int]:
        """Enabled clusters that are due, each claimed by compare-and-set on ``next_due``."""
        due = cls.objects.filter(enabled=True, region__in=Region.objects.shown())
        return leases.claim_due(due, now)


class Node(PushTokenHolder):
    """A data node of a cluster, polled over MySQL or pushing its status with its own token
    (garbd has no SQL port: not a Node)."""

    token_prefix = TOKEN_PREFIX

    class Mode(models.TextChoices):
        POLL = "poll", "Polled by Vigil"
        PUSH = "push", "Pushes to the API"

    cluster = models.ForeignKey(Cluster, models.CASCADE, related_name="nodes")
    name = models.CharField(max_length=100, blank=True, help_text="Empty to show host:port.")
    host = models.CharField(max_length=255, validators=[outbound.validate_host])
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
    mode = models.CharField(
        max_length=4,
        choices=Mode.choices,
        default=Mode.POLL,
        help_text="Push: the node runs vigil-galera-push with its own token; Vigil never "
        "connects to it.",
    )
    recorded_sample = models.CharField(
        max_length=100, blank=True, editable=False, help_text="Demo: a file in demo_samples/."
    )
    # The last poll of this node.
    state = models.CharField(max_length=20, blank=True, editable=False)
    detail = models.TextField(blank=True, editable=False)
    # The last push of a pushing node: SHOW GLOBAL STATUS LIKE 'wsrep_%' as text, and
    # wsrep_provider_options when it came apart from it.
    reported_at = models.DateTimeField(null=True, blank=True, editable=False)
    report_status = models.TextField(blank=True, editable=False)
    report_options = models.TextField(blank=True, editable=False)
    # A stopped node's last push (parse_grastate.Grastate.as_dict): grastate.dat and the
    # recovered position; {} once it reports wsrep status again.
    grastate = models.JSONField(default=dict, blank=True, editable=False)

    class Meta:
        ordering = ["cluster", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "host", "port"], name="galera_node_unique")
        ]

    #: Set by a form or serializer whose request gave a password reference: a move keeps it.
    password_given = False

    def __str__(self) -> str:
        return self.label

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.moved and not self.password_given and (self.password_env or self.password_file):
            self.password_env = self.password_file = ""
            if kwargs.get("update_fields") is not None:
                kwargs["update_fields"] = {
                    *kwargs["update_fields"],
                    "password_env",
                    "password_file",
                }
        super().save(*args, **kwargs)
        self._loaded_address = (self.host, self.port)
        self.password_given = False

    @classmethod
    def from_db(cls, db: Any, field_names: Any, values: Any) -> Node:
        node = super().from_db(db, field_names, values)
        node._loaded_address = (node.__dict__.get("host"), node.__dict__.get("port"))
        return node

    @property
    def moved(self) -> bool:
        """Whether host or port differ from what was loaded from the database."""
        loaded = getattr(self, "_loaded_address", None)
        return loaded is not None and loaded != (self.host, self.port)

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
            raise PasswordUnavailable(
                "the node's password reference is not allowed (edit the node to give it again)",
                f"{self.password_env or self.password_file}: {' '.join(error.messages)}",
            ) from None
        if self.password_env:
            value = os.environ.get(self.password_env)
            if value is None:
                raise PasswordUnavailable(
                    "its environment variable is not set on the worker",
                    f"environment variable {self.password_env}",
                )
            return value
        if self.password_file:
            try:
                return path.read_text().rstrip("\r\n")
            except OSError as error:
                reason = error.strerror or type(error).__name__
                raise PasswordUnavailable(
                    f"its file cannot be read ({reason})", f"password file {self.password_file}"
                ) from None
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
    flow_control_paused = models.FloatField(
        null=True,
        blank=True,
        help_text="wsrep_flow_control_paused of the most paused node: an average since it "
        "started or its last FLUSH STATUS.",
    )
    flow_control_paused_share = models.FloatField(
        null=True,
        blank=True,
        help_text="Share (0..1) of the interval since its previous reading that the most "
        "paused node was paused by flow control (wsrep_flow_control_paused_ns).",
    )
    recv_queue = models.PositiveIntegerField(
        null=True, blank=True, help_text="Longest receive queue now (wsrep_local_recv_queue)."
    )
    send_queue = models.PositiveIntegerField(
        null=True, blank=True, help_text="Longest send queue now (wsrep_local_send_queue)."
    )
    cluster_weight = models.PositiveIntegerField(
        null=True, blank=True, help_text="wsrep_cluster_weight of the Primary component."
    )
    cert_failures_per_minute = models.FloatField(
        null=True, blank=True, help_text="Certification failures per minute, all nodes."
    )
    # {label: {state, detail, local_state_comment, recv_queue, recv_queue_avg, send_queue,
    #  flow_control_paused_ns, flow_control_paused_share, interval_s, evs_delayed, ...}}
    # (collect.node_facts and collect.between)
    nodes = models.JSONField(default=dict)

    class Meta:
        ordering = ["-created", "-pk"]
        indexes = [models.Index(fields=["cluster", "-created"])]

    def __str__(self) -> str:
        return f"{self.cluster} at {self.created:%Y-%m-%d %H:%M:%S}"


track(
    Cluster,
    exclude=[*SUBJECT_FIELDS, "next_due", *POLLED_FIELDS],
)
# password_env / password_file name where the password is, they are not it: recorded as they are.
track(
    Node,
    exclude=["state", "detail", "reported_at", "report_status", "report_options", "grastate"],
    secrets=["token_hash"],
)

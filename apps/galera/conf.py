"""Galera (apps/galera): its ``VIGIL_*`` settings, read while the settings load.

No Django here: ``config/settings/base.py`` imports this module for every installed app that
has one, adds ``VARIABLES`` to the known variables (a typo stops the start) and the values of
``read(setting)`` to the settings. Each variable is documented in ``.env.example``.
"""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import ImproperlyConfigured

VARIABLES = (
    "VIGIL_GALERA_CERT_FAILURES_PER_MINUTE",
    "VIGIL_GALERA_PUSH_STALE_MINUTES",
    "VIGIL_GALERA_SECRETS_DIR",
    "VIGIL_GALERA_SNAPSHOT_RETENTION_DAYS",
)


def read(setting: Callable[..., object]) -> dict[str, object]:
    """The values, from the environment through ``setting(name, cast, default)``."""
    # A node's password_file must be inside this directory, which must hold nothing else secret
    # (not the SSH key, Kubernetes tokens or other *_FILE secrets: apps/galera/secretsdir.py).
    VIGIL_GALERA_SECRETS_DIR = setting("VIGIL_GALERA_SECRETS_DIR", default="/run/secrets/galera")
    # A pushing node (vigil-galera-push) with no report for this long is unknown.
    VIGIL_GALERA_PUSH_STALE_MINUTES = setting("VIGIL_GALERA_PUSH_STALE_MINUTES", "int", default=5)
    # Snapshots are kept this long, then expired by the beat (apps/lib/retention.py).
    VIGIL_GALERA_SNAPSHOT_RETENTION_DAYS = setting(
        "VIGIL_GALERA_SNAPSHOT_RETENTION_DAYS", "int", default=30
    )
    if VIGIL_GALERA_PUSH_STALE_MINUTES < 1:
        raise ImproperlyConfigured("Invalid value for VIGIL_GALERA_PUSH_STALE_MINUTES: at least 1")
    # Certification failures per minute (all nodes of a cluster) from which a cluster is a warning.
    VIGIL_GALERA_CERT_FAILURES_PER_MINUTE = setting(
        "VIGIL_GALERA_CERT_FAILURES_PER_MINUTE", "float", default=10.0
    )
    if not 0 < VIGIL_GALERA_CERT_FAILURES_PER_MINUTE < 1e9:
        raise ImproperlyConfigured(
            "Invalid value for VIGIL_GALERA_CERT_FAILURES_PER_MINUTE: above 0, below 10⁹"
        )
    values = locals()
    return {name: values[name] for name in VARIABLES}

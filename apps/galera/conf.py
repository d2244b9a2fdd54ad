"""Galera (apps/galera): its ``VIGIL_*`` settings (``apps.lib.appconf``)."""

from __future__ import annotations

from apps.lib.appconf import Setting


def _stale_minutes(value: int) -> int:
    if value < 1:
        raise ValueError("at least 1")
    return value


def _cert_failures(value: float) -> float:
    if not 0 < value < 1e9:
        raise ValueError("above 0, below 10⁹")
    return value


SETTINGS = (
    # A node's password_file must be inside this directory, which must hold nothing else secret
    # (not the SSH key, Kubernetes tokens or other *_FILE secrets: apps/galera/secretsdir.py).
    Setting("VIGIL_GALERA_SECRETS_DIR", default="/run/secrets/galera"),
    # A pushing node (vigil-galera-push) with no report for this long is unknown.
    Setting("VIGIL_GALERA_PUSH_STALE_MINUTES", "int", 5, _stale_minutes),
    # Snapshots are kept this long, then expired by the beat (apps/lib/retention.py).
    Setting("VIGIL_GALERA_SNAPSHOT_RETENTION_DAYS", "int", 30),
    # Certification failures per minute (all nodes of a cluster) from which a cluster is a warning.
    Setting("VIGIL_GALERA_CERT_FAILURES_PER_MINUTE", "float", 10.0, _cert_failures),
)

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


def _share(value: float) -> float:
    if not 0 < value < 1:
        raise ValueError("above 0, below 1")
    return value


def _queue(value: float) -> float:
    if not 0 <= value < 1e9:
        raise ValueError("0 or more, below 10⁹")
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
    # Share of the time between two polls a node may be paused by flow control before the
    # cluster is a warning (from wsrep_flow_control_paused_ns).
    Setting("VIGIL_GALERA_FLOW_CONTROL_PAUSED", "float", 0.1, _share),
    # Write-sets waiting to be applied / sent on a node, on two polls in a row, beyond which
    # the cluster is a warning.
    Setting("VIGIL_GALERA_RECV_QUEUE", "float", 10.0, _queue),
    Setting("VIGIL_GALERA_SEND_QUEUE", "float", 10.0, _queue),
)

"""Galera (apps/galera): its ``VIGIL_*`` settings (``apps.lib.appconf``)."""

from __future__ import annotations

from apps.lib.appconf import Setting, at_least, within

SETTINGS = (
    Setting(
        "VIGIL_GALERA_SECRETS_DIR",
        default="/run/secrets/galera",
        help="A node's password_file must be inside this directory, which must hold nothing else "
        "secret (not the SSH key, Kubernetes tokens or other *_FILE secrets: "
        "apps/galera/secretsdir.py). Or a node names an environment variable GALERA_*.",
    ),
    Setting(
        "VIGIL_GALERA_PUSH_STALE_MINUTES",
        "int",
        5,
        at_least(1),
        help="A pushing node (agents/vigil-galera-push) with no report for this long is unknown.",
    ),
    Setting(
        "VIGIL_GALERA_SNAPSHOT_RETENTION_DAYS",
        "int",
        30,
        help="Snapshots are kept this long, then expired by the beat.",
    ),
    Setting(
        "VIGIL_GALERA_CERT_FAILURES_PER_MINUTE",
        "float",
        10.0,
        within(0, 1e9, "above 0, below 10⁹", above=True),
        help="Certification failures per minute (all nodes of a cluster) from which a cluster is "
        "a warning.",
    ),
    Setting(
        "VIGIL_GALERA_FLOW_CONTROL_PAUSED",
        "float",
        0.1,
        within(0, 1, "above 0, below 1", above=True),
        help="Share of the time between two polls a node may be paused by flow control "
        "(wsrep_flow_control_paused_ns) before the cluster is a warning.",
    ),
    Setting(
        "VIGIL_GALERA_RECV_QUEUE",
        "float",
        10.0,
        within(0, 1e9, "0 or more, below 10⁹"),
        help="Write-sets waiting to be applied on a node, on two polls in a row, beyond which the "
        "cluster is a warning.",
    ),
    Setting(
        "VIGIL_GALERA_SEND_QUEUE",
        "float",
        10.0,
        within(0, 1e9, "0 or more, below 10⁹"),
        help="Write-sets waiting to be sent from a node, on two polls in a row, beyond which the "
        "cluster is a warning.",
    ),
)

"""Galera clusters for ``/metrics``: what the last poll of each saw, in one query.

A figure the last poll could not establish (no node answered, not Primary) is left out,
never exported as 0; ``vigil_galera_polled_timestamp_seconds`` says how old the poll is.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import QuerySet
from prometheus_client.core import Metric

from apps.prometheus.families import Gauges, SubjectStatuses, subject_rows

LABELS = ("region", "account", "cluster")

# (metric, Cluster field, help)
FIGURES = (
    ("vigil_galera_cluster_size", "cluster_size", "wsrep_cluster_size: members, garbd included."),
    (
        "vigil_galera_expected_cluster_size",
        "expected_size",
        "Data nodes plus arbitrators it should have.",
    ),
    ("vigil_galera_primary", "primary", "1 when the cluster is Primary (has quorum), 0 when not."),
    ("vigil_galera_data_nodes", "data_nodes", "Data nodes in the Primary component."),
    ("vigil_galera_arbitrators", "arbitrators", "garbd arbitrators in the cluster."),
    (
        "vigil_galera_headroom_one_by_one_nodes",
        "one_by_one",
        "Nodes that may still fail one after another before the cluster loses quorum.",
    ),
    (
        "vigil_galera_headroom_at_once_nodes",
        "simultaneous",
        "Nodes that may still fail at the same moment before the cluster loses quorum.",
    ),
    (
        "vigil_galera_flow_control_paused_ratio",
        "flow_control_paused",
        "wsrep_flow_control_paused of the most paused node (0..1): an average since the node "
        "started or its last FLUSH STATUS, not the state now.",
    ),
    (
        "vigil_galera_flow_control_paused_interval_ratio",
        "flow_control_paused_share",
        "Share (0..1) of the time between its last two readings the most paused node was "
        "paused by flow control (wsrep_flow_control_paused_ns).",
    ),
    (
        "vigil_galera_recv_queue_writesets",
        "recv_queue",
        "Longest receive queue now, write-sets waiting to be applied (wsrep_local_recv_queue).",
    ),
    (
        "vigil_galera_send_queue_writesets",
        "send_queue",
        "Longest send queue now, write-sets waiting to be sent (wsrep_local_send_queue).",
    ),
    (
        "vigil_galera_cluster_weight",
        "cluster_weight",
        "wsrep_cluster_weight: pc.weight of the Primary component's members, garbd included.",
    ),
    (
        "vigil_galera_cert_failures_per_minute",
        "cert_failures_per_minute",
        "Certification failures per minute, all nodes (wsrep_local_cert_failures between polls).",
    ),
)


def metrics(subjects: QuerySet, statuses: SubjectStatuses) -> Iterator[Metric]:
    gauges = Gauges(LABELS)
    for name, _, documentation in FIGURES:
        gauges.declare(name, documentation)
    gauges.declare("vigil_galera_polled_timestamp_seconds", "When it was last polled (Unix time).")
    fields = [field for _, field, _ in FIGURES if field != "expected_size"]
    rows = subject_rows(
        subjects,
        "name",
        "status",
        "expected_data_nodes",
        "expected_arbitrators",
        "polled_at",
        *fields,
    )
    for region, account, row in rows:
        labels = (region, account, row["name"])
        statuses.add("galera", region, account, row["name"], row["status"])
        row["expected_size"] = row["expected_data_nodes"] + row["expected_arbitrators"]
        for metric, field, _ in FIGURES:
            gauges.add(metric, labels, row[field])
        if row["polled_at"] is not None:
            gauges.add(
                "vigil_galera_polled_timestamp_seconds", labels, row["polled_at"].timestamp()
            )
    yield from gauges

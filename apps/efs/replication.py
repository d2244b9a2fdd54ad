"""A file system's replicas (its replication destinations) judged: is one stalled or failed.

Pure: no Django, no I/O. AWS's RPO is ``documented.LIMITS["replication.rpo_minutes"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from apps.lib.formats import rough_duration
from apps.lib.status import Status


@dataclass(frozen=True)
class Replica:
    """One replication destination as the verdict needs it: its status (AWS's) and the last
    time it is known to have synced, from TimeSinceLastSync's latest reading (the reading's
    minute less its value) or DescribeReplicationConfigurations' LastReplicatedTimestamp,
    whichever is later; None when neither says."""

    destination: str
    region: str
    status: str
    last_sync_at: datetime | None = None


def replica_findings(
    replicas: Sequence[Replica], now: datetime, warning: timedelta, critical: timedelta
) -> list[tuple[Status, str]]:
    """A stalled or failed replica: time since its last sync over ``warning`` (AWS's 15-minute
    RPO, ``documented.LIMITS``) or ``critical``, AWS's ERROR status critical, PAUSED a warning.
    ENABLING (the first copy) and DELETING are not judged. The time grows with the age of the
    last reading, so a metric that stops arriving does not freeze the lag."""
    out: list[tuple[Status, str]] = []
    for r in replicas:
        name = f"replica {r.destination} ({r.region})" if r.region else f"replica {r.destination}"
        if r.status == "ERROR":
            out.append((Status.CRITICAL, f"{name}: replication failed (AWS status ERROR)"))
            continue
        if r.status in ("PAUSED", "PAUSING"):
            out.append((Status.WARNING, f"{name}: replication paused"))
            continue
        if r.status != "ENABLED":
            continue
        if r.last_sync_at is None:
            out.append((Status.WARNING, f"{name}: no sync reported yet"))
            continue
        lag = now - r.last_sync_at
        if lag > critical or lag > warning:
            level = Status.CRITICAL if lag > critical else Status.WARNING
            rpo = int(warning.total_seconds() // 60)
            out.append(
                (
                    level,
                    f"{name} last synced {rough_duration(lag.total_seconds())} ago "
                    f"(AWS's RPO: {rpo} min)",
                )
            )
    return out

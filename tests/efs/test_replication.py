"""Replicas judged by their last sync and AWS's status (apps/efs/replication.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from apps.efs.replication import Replica, replica_findings
from apps.lib.status import Status

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def _replica(status="ENABLED", minutes_ago: float | None = 3.0, name="fs-0123456789abcdef0"):
    at = None if minutes_ago is None else NOW - timedelta(minutes=minutes_ago)
    return Replica(name, "eu-west-1", status, at)


@pytest.mark.parametrize(
    ("replica", "status", "reason"),
    [
        (_replica(minutes_ago=3), None, None),
        (_replica(minutes_ago=14.5), None, None),
        (_replica(minutes_ago=16), Status.WARNING, "last synced ~16 min ago (AWS's RPO: 15 min)"),
        (_replica(minutes_ago=61), Status.CRITICAL, "last synced ~61 min ago (AWS's RPO: 15 min)"),
        (_replica("ERROR"), Status.CRITICAL, ": replication failed (AWS status ERROR)"),
        (_replica("PAUSED"), Status.WARNING, ": replication paused"),
        (_replica(minutes_ago=None), Status.WARNING, ": no sync reported yet"),
        (_replica("ENABLING", minutes_ago=None), None, None),  # the first copy: not judged
    ],
)
def test_it_judges_each_replica_by_its_last_sync_and_aws_status(replica, status, reason):
    found = replica_findings([replica], NOW, timedelta(minutes=15), timedelta(minutes=60))
    if status is None:
        assert found == []
    else:
        ((got, text),) = found
        assert got is status
        assert (
            text
            == f"replica fs-0123456789abcdef0 (eu-west-1){'' if reason[0] == ':' else ' '}{reason}"
        )

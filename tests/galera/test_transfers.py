"""State transfers from the poll history: donor, joiner, since when, how long."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from apps.galera.models import Cluster, Snapshot
from apps.galera.transfers import Transfer, transfers

T0 = datetime(2026, 11, 26, 3, 0, tzinfo=UTC)


def at(minute: int) -> datetime:
    return T0 + timedelta(minutes=minute)


def test_it_finds_a_finished_transfer_with_its_donor_and_duration():
    history = [
        (at(0), {"db1": "Synced", "db2": "Synced", "db3": None}),
        (
            at(1),
            {"db1": "Donor/Desynced", "db2": "Synced", "db3": "Joining: receiving State Transfer"},
        ),
        (at(2), {"db1": "Donor/Desynced", "db2": "Synced", "db3": "Joiner"}),
        (at(3), {"db1": "Synced", "db2": "Synced", "db3": "Joined"}),
        (at(4), {"db1": "Synced", "db2": "Synced", "db3": "Synced"}),
    ]
    (transfer,) = transfers(history)
    assert transfer == Transfer("db3", "db1", at(1), at(4), 60.0)
    assert transfer.seconds == 180


def test_a_transfer_still_running_has_no_end_and_the_most_recent_comes_first():
    history = [
        (at(0), {"db1": "Synced", "db2": "Joining"}),
        (at(1), {"db1": "Synced", "db2": "Synced"}),
        (at(5), {"db1": "Joining", "db2": "Donor/Desynced"}),
    ]
    running, done = transfers(history)
    assert (running.joiner, running.donor, running.ended) == ("db1", "db2", None)
    assert (done.joiner, done.donor, done.seconds, done.resolution_s) == ("db2", None, 60, None)


def test_a_node_desynced_alone_is_no_transfer():
    assert transfers([(at(0), {"db1": "Donor/Desynced", "db2": "Synced"})]) == []


@pytest.mark.django_db
def test_the_cluster_page_lists_the_transfers_with_donor_and_duration(logged_in_client, site):
    cluster = Cluster.objects.create(region=site, name="prod-db")
    states = [
        {"db1": "Synced", "db3": "Synced"},
        {"db1": "Donor/Desynced", "db3": "Joining"},
        {"db1": "Synced", "db3": "Synced"},
    ]
    for minute, comments in enumerate(states):
        Snapshot.objects.create(
            cluster=cluster,
            created=at(minute),
            status="ok",
            nodes={n: {"state": "primary", "local_state_comment": c} for n, c in comments.items()},
        )
    page = logged_in_client.get(cluster.get_absolute_url()).content.decode()
    page = " ".join(page.split())  # as a browser shows it: the template wraps its lines
    assert "State transfers" in page
    assert "<strong>db3</strong> joined from <strong>db1</strong>" in page
    assert "took 1 min" in page or "took 60 s" in page

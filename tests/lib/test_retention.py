"""Expiry of the grow-only history: each table by its setting, in short batches."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps import alerts
from apps.alerts.models import Channel, Incident, Notification, Transition
from apps.galera.models import Cluster, Snapshot
from apps.lib import retention
from apps.lib.status import Status, Verdict
from apps.probes.models import Result, Target
from apps.regions import tasks

pytestmark = pytest.mark.django_db


@pytest.fixture
def target(site) -> Target:
    return Target.objects.create(region=site, url="http://127.0.0.1:1/")


def _results(target: Target, ages_days: list[float]) -> None:
    now = timezone.now()
    Result.objects.bulk_create(
        Result(target=target, started_at=now, created=now - timedelta(days=d), cap_s=30)
        for d in ages_days
    )


def test_it_expires_probe_results_past_their_retention_in_short_batches(target, settings):
    settings.VIGIL_PROBES_RESULT_RETENTION_DAYS = 30
    _results(target, [31, 32, 33, 34, 35, 29, 1])
    with CaptureQueriesContext(connection) as queries:
        deleted = retention.expire(retention.HISTORY[0].expired(timezone.now()), 2, "created")
    assert deleted == 5
    assert sorted(round(r) for r in _ages(Result.objects.all())) == [1, 29]
    deletes = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("DELETE")]
    assert len(deletes) == 3  # 2 + 2 + the last 1, each in its own transaction


def _ages(rows) -> list[float]:
    now = timezone.now()
    return [(now - r.created).total_seconds() / 86400 for r in rows]


def test_it_expires_snapshots_by_their_own_setting(site, settings):
    settings.VIGIL_GALERA_SNAPSHOT_RETENTION_DAYS = 7
    cluster = Cluster.objects.create(region=site, name="c1")
    now = timezone.now()
    for days in (8, 6):
        Snapshot.objects.create(cluster=cluster, status="ok", created=now - timedelta(days=days))
    retention.expire_all(now)
    assert [round(a) for a in _ages(Snapshot.objects.all())] == [6]


def test_it_expires_sent_notifications_and_keeps_the_unsettled(target, settings):
    settings.VIGIL_ALERT_NOTIFICATION_RETENTION_DAYS = 90
    flip = alerts.record(target, Verdict(Status.CRITICAL, "down"))
    channel = Channel.objects.create(name="On call", target="oncall@example.com")
    long_ago = timezone.now() - timedelta(days=91)
    for n, state in enumerate(("sent", "pending", "failed")):
        Notification.objects.create(
            transition=flip, channel=channel, sequence=n, state=state, sent=long_ago
        )
    Notification.objects.create(
        transition=flip, channel=channel, sequence=9, state="sent", sent=timezone.now()
    )
    retention.expire_all(timezone.now())
    assert sorted(Notification.objects.values_list("sequence", flat=True)) == [1, 2, 9]


def test_it_expires_processed_transitions_but_not_an_incidents_last_or_an_unsent_one(
    target, settings
):
    settings.VIGIL_ALERT_TRANSITION_RETENTION_DAYS = 400
    down = alerts.record(target, Verdict(Status.CRITICAL, "down"))
    up = alerts.record(target, Verdict(Status.OK, "up"))
    again = alerts.record(target, Verdict(Status.CRITICAL, "down again"))
    old = timezone.now() - timedelta(days=401)
    Transition.objects.update(created=old, processed=old)
    Transition.objects.filter(pk=up.pk).update(processed=None)
    channel = Channel.objects.create(name="On call", target="oncall@example.com")
    Notification.objects.create(transition=down, channel=channel, state="failed")
    retention.expire_all(timezone.now())
    kept = set(Transition.objects.values_list("pk", flat=True))
    assert Incident.objects.filter(last_transition=again).exists()
    assert kept == {up.pk, again.pk} and down.pk not in kept
    assert not Notification.objects.filter(transition=down).exists()  # went with it


def test_the_beat_expires_history_hourly(target):
    assert settings.CELERY_BEAT_SCHEDULE["expire-history"] == {
        "task": "apps.regions.tasks.expire_history",
        "schedule": 3600.0,
    }
    _results(target, [settings.VIGIL_PROBES_RESULT_RETENTION_DAYS + 1, 0])
    tasks.expire_history()
    assert Result.objects.count() == 1

"""Probe results by day: on PostgreSQL each row in its day's partition and an expired day
dropped whole; on SQLite (no partitions) the same expiry by batched deletes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.lib import partitions, retention
from apps.probes.models import Result, Target
from tests.conftest import bearer

pytestmark = pytest.mark.django_db

POSTGRESQL = connection.vendor == "postgresql"


@pytest.fixture
def target(site) -> Target:
    return Target.objects.create(region=site, url="http://127.0.0.1:1/")


def _result(target: Target, created) -> Result:
    return Result.objects.create(target=target, started_at=created, created=created, cap_s=30)


def _partition_of(result: Result) -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tableoid::regclass::text FROM probes_result WHERE id = %s", [result.pk]
        )
        return cursor.fetchone()[0]


def test_it_partitions_probe_results_by_day_on_postgresql_only():
    assert partitions.partitioned(Result) is POSTGRESQL
    made = partitions.ensure_ahead(Result, timezone.now())
    assert made == []  # migrate made today's and the days ahead already (nothing on SQLite)
    if POSTGRESQL:
        today = timezone.now().date()
        ahead = set(partitions.days(Result))
        assert {today + timedelta(days=n) for n in range(partitions.AHEAD_DAYS + 1)} <= ahead


def test_an_expired_day_goes_by_drop_and_the_rest_stays(target, settings):
    settings.VIGIL_PROBES_RESULT_RETENTION_DAYS = 30
    now = timezone.now()
    cutoff = now - timedelta(days=30)
    if POSTGRESQL:
        partitions.ensure(Result, (cutoff - timedelta(days=3)).date(), now.date())
    old = _result(target, cutoff - timedelta(days=2))
    edge = _result(target, cutoff - timedelta(seconds=1))  # expired, its day is not over
    new = _result(target, now)
    if POSTGRESQL:
        for row in (old, edge, new):
            assert _partition_of(row) == partitions.partition_name(
                "probes_result", row.created.date()
            )

    # The rows were written in this test's transaction: their deferred foreign-key checks run
    # now, as they would have at their own commit (PostgreSQL drops no table with checks due).
    connection.check_constraints()
    with CaptureQueriesContext(connection) as queries:
        deleted = retention.expire_all(now)["probes.Result"]
    sql = [q["sql"] for q in queries.captured_queries]
    kept = set(Result.objects.values_list("pk", flat=True))
    if POSTGRESQL:
        old_day = partitions.partition_name("probes_result", old.created.date())
        assert f'DROP TABLE "{old_day}"' in sql
        assert not any(s.startswith('DELETE FROM "probes_result"') for s in sql)
        assert (deleted, kept) == (1, {edge.pk, new.pk})  # a day goes whole, or not at all
        assert old.created.date() not in partitions.days(Result)
    else:
        assert any(s.startswith('DELETE FROM "probes_result"') for s in sql)
        assert (deleted, kept) == (2, {new.pk})


def test_a_row_of_a_day_without_a_partition_waits_in_the_default_one_then_moves(target):
    far = timezone.now() + timedelta(days=partitions.AHEAD_DAYS + 30)
    early = _result(target, far)
    if not POSTGRESQL:
        assert partitions.ensure_ahead(Result, far) == []
        return
    assert _partition_of(early) == "probes_result_default"
    assert partitions.ensure(Result, far.date(), far.date()) == [
        partitions.partition_name("probes_result", far.date())
    ]
    assert _partition_of(early) == partitions.partition_name("probes_result", far.date())


def test_the_api_and_the_probe_page_read_across_days(target, api_client, api_key, client, user):
    now = timezone.now()
    if POSTGRESQL:
        partitions.ensure(Result, (now - timedelta(days=3)).date(), now.date())
    rows = [_result(target, now - timedelta(days=days, minutes=1)) for days in (3, 2, 1, 0)]
    auth = bearer(api_key())
    first = api_client.get("/api/probes/results/?limit=2", **auth).json()
    second = api_client.get(first["next"], **auth).json()
    assert [r["id"] for r in first["results"] + second["results"]] == [r.pk for r in rows[::-1]]
    assert second["next"] is None
    client.force_login(user)
    page = client.get(reverse("probes:target", args=[target.pk]))
    assert page.status_code == 200

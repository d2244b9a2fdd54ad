"""Probe results and EFS minutes by day: on PostgreSQL each row in its day's partition and an
expired day dropped whole (EFS minutes rolled up into hours first); on SQLite (no partitions)
the same expiry by batched deletes, and EFS minutes deleted by the collection's rollup."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.efs import history
from apps.efs.metrics import Sample
from apps.efs.models import FileSystem, MetricHour, MetricMinute
from apps.lib import partitions, retention
from apps.probes.models import Result, Target
from apps.regions.models import Account, Region
from tests.helpers import bearer

pytestmark = pytest.mark.django_db

POSTGRESQL = connection.vendor == "postgresql"


@pytest.fixture
def target(site) -> Target:
    return Target.objects.create(region=site, url="http://127.0.0.1:1/")


def _result(target: Target, created) -> Result:
    return Result.objects.create(target=target, started_at=created, created=created, cap_s=30)


def _partition_of(row: Result | MetricMinute) -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT tableoid::regclass::text FROM {row._meta.db_table} WHERE id = %s", [row.pk]
        )
        return cursor.fetchone()[0]


@pytest.mark.parametrize("model", [Result, MetricMinute])
def test_it_partitions_probe_results_and_efs_minutes_by_day_on_postgresql_only(model):
    assert partitions.partitioned(model) is POSTGRESQL
    made = partitions.ensure_ahead(model, timezone.now())
    assert made == []  # migrate made today's and the days ahead already (nothing on SQLite)
    if POSTGRESQL:
        today = timezone.now().date()
        ahead = set(partitions.days(model))
        assert {today + timedelta(days=n) for n in range(partitions.AHEAD_DAYS + 1)} <= ahead


def _retention(model, settings, setting: str, days: int):
    """``setting`` set to ``days``, and ``model``'s partitions from 3 days before the cutoff
    to today; (now, cutoff)."""
    setattr(settings, setting, days)
    now = timezone.now()
    cutoff = now - timedelta(days=days)
    if POSTGRESQL:
        partitions.ensure(model, (cutoff - timedelta(days=3)).date(), now.date())
    return now, cutoff


def test_an_expired_day_goes_by_drop_and_the_rest_stays(target, settings):
    now, cutoff = _retention(Result, settings, "VIGIL_PROBES_RESULT_RETENTION_DAYS", 30)
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
    page = client.get(reverse("probes:target_detail", args=[target.pk]))
    assert page.status_code == 200


# --- EFS minutes ---------------------------------------------------------------------------


@pytest.fixture
def fs() -> FileSystem:
    region = Region.objects.create(account=Account.objects.create(name="a"), code="us-east-1")
    return FileSystem.objects.create(region=region, filesystem_id="fs-0123abcd")


def _minutes(fs: FileSystem, start, n: int) -> list[MetricMinute]:
    """``n`` minutes from ``start`` saved as collection saves them (the upsert); their rows."""
    history.save_samples(
        {fs.pk: [Sample(start + timedelta(minutes=i), total_count=60.0) for i in range(n)]}
    )
    end = start + timedelta(minutes=n)
    return list(MetricMinute.objects.filter(ts__gte=start, ts__lt=end).order_by("ts"))


def test_an_expired_minute_day_is_rolled_up_then_dropped_whole(fs, settings):
    now, cutoff = _retention(MetricMinute, settings, "VIGIL_EFS_MINUTE_RETENTION_DAYS", 7)
    old_hour = (cutoff - timedelta(days=2)).replace(minute=0, second=0, microsecond=0)
    old = _minutes(fs, old_hour, 30)  # no collection rolled them up (its worker was down)
    midnight = cutoff.replace(hour=0, minute=0, second=0, microsecond=0)
    edge_minute = max(cutoff.replace(second=0, microsecond=0) - timedelta(minutes=1), midnight)
    edge = _minutes(fs, edge_minute, 1)  # expired, its day is not over
    new = _minutes(fs, now.replace(second=0, microsecond=0) - timedelta(minutes=5), 2)
    # Upserted again: the same rows, each in its own day's partition.
    assert len(_minutes(fs, old_hour, 30)) == 30 and MetricMinute.objects.count() == 33
    if POSTGRESQL:
        for row in (*old, *edge, *new):
            day = partitions.partition_name("efs_metricminute", row.ts.date())
            assert _partition_of(row) == day

    connection.check_constraints()  # as in the probe results' test above
    with CaptureQueriesContext(connection) as queries:
        deleted = retention.expire_all(now)
    sql = [q["sql"] for q in queries.captured_queries]
    if not POSTGRESQL:
        assert "efs.MetricMinute" not in deleted  # the rollup deletes them, as before
        assert MetricMinute.objects.count() == 33 and not MetricHour.objects.exists()
        history.rollup(fs, now)
        kept = set(MetricMinute.objects.values_list("pk", flat=True))
        assert {r.pk for r in new} <= kept and not kept & {r.pk for r in old}
        return
    old_day = partitions.partition_name("efs_metricminute", old_hour.date())
    assert f'DROP TABLE "{old_day}"' in sql
    assert not any(s.startswith('DELETE FROM "efs_metricminute"') for s in sql)
    assert deleted["efs.MetricMinute"] == 30
    kept = set(MetricMinute.objects.values_list("pk", flat=True))
    assert kept == {r.pk for r in (*edge, *new)}  # a day goes whole, or not at all
    hour = MetricHour.objects.get(ts=old_hour)  # rolled up before its minutes went
    assert (hour.minutes, hour.total_count) == (30, 1800.0)


def test_minutes_already_rolled_up_are_not_read_again_before_their_day_goes(fs, settings):
    settings.VIGIL_EFS_MINUTE_RETENTION_DAYS = 7
    now = timezone.now()
    start = (now - timedelta(days=8)).replace(minute=0, second=0, microsecond=0)
    _minutes(fs, start, 90)
    assert history.rollup(fs, now) == 2
    MetricHour.objects.filter(ts=start).update(total_count=1.0)  # marks a rewrite
    with CaptureQueriesContext(connection) as queries:
        assert history.roll_up_before(now - timedelta(days=7)) is not None
    assert MetricHour.objects.get(ts=start).total_count == 1.0
    assert not any("INSERT" in q["sql"] for q in queries.captured_queries)


@pytest.mark.skipif(not POSTGRESQL, reason="partitions are PostgreSQL's")
def test_the_file_system_chart_reads_only_the_days_it_shows(fs):
    now = timezone.now()
    partitions.ensure(MetricMinute, (now - timedelta(days=6)).date(), now.date())
    minutes = MetricMinute.objects.filter(
        filesystem_id=fs.pk, ts__gte=now - timedelta(hours=24), ts__lt=now
    )
    plan = minutes.explain()
    shown = {(now - timedelta(days=d)).date() for d in (0, 1)}
    for day, name in partitions.days(MetricMinute).items():
        assert (name in plan) is (day in shown), plan


@pytest.mark.skipif(not POSTGRESQL, reason="partitions are PostgreSQL's")
@pytest.mark.django_db(transaction=True)
def test_the_migration_partitions_a_populated_minute_table(fs):
    """efs.0006 on the table as 0005 left it (plain, with rows of three days): every row copied
    into its day's partition, ids kept and the sequence after them, the same constraints and
    indexes as a fresh migrate's."""
    from django.db.migrations.executor import MigrationExecutor

    fresh = _schema()
    state = MigrationExecutor(connection).loader.project_state(("efs", "0005_filesystem_changed"))
    before = state.apps.get_model("efs", "MetricMinute")
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE efs_metricminute")
    with connection.schema_editor() as editor:
        editor.create_model(before)
    assert not partitions.partitioned(MetricMinute)
    now = timezone.now().replace(second=0, microsecond=0)
    ts = [now - timedelta(days=d, minutes=m) for d in (2, 1, 0) for m in range(5)]
    with connection.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO efs_metricminute (id, filesystem_id, ts, total_count) "
            "VALUES (%s, %s, %s, 60)",
            [(100 + i, fs.pk, t) for i, t in enumerate(ts)],
        )

    partitions.partition_by_day(before, "ts", batch=4)  # four batches and a bit
    # The columns later migrations add (efs.0007: the metadata split), as they add them.
    known = {field.column for field in before._meta.local_fields}
    with connection.schema_editor() as editor:
        for field in MetricMinute._meta.local_fields:
            if field.column not in known:
                editor.add_field(MetricMinute, field)

    assert partitions.partitioned(MetricMinute) and _schema() == fresh
    rows = list(MetricMinute.objects.order_by("id"))
    assert [(r.pk, r.ts) for r in rows] == [(100 + i, t) for i, t in enumerate(ts)]
    for row in rows:
        assert _partition_of(row) == partitions.partition_name("efs_metricminute", row.ts.date())
    history.save_samples({fs.pk: [Sample(now + timedelta(minutes=1), total_count=1.0)]})
    assert MetricMinute.objects.latest("id").pk == 100 + len(ts)


def _schema() -> tuple[list, list]:
    """efs_metricminute's constraints and indexes, by name, as PostgreSQL defines them."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE conrelid = 'efs_metricminute'::regclass ORDER BY conname"
        )
        constraints = cursor.fetchall()
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'efs_metricminute' "
            "ORDER BY indexname"
        )
        return constraints, cursor.fetchall()

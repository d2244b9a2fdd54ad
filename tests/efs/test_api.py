"""The EFS API: its list rows as the serializer writes them; its series: any time Python reads is
answered, never with a server error."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.efs.api import FileSystemSerializer, FileSystemViewSet
from apps.efs.models import FileSystem
from apps.regions.models import Account, Region
from tests.helpers import bearer

pytestmark = pytest.mark.django_db


@pytest.fixture
def url() -> str:
    region = Region.objects.create(account=Account.objects.create(name="prod"), code="eu-west-1")
    fs = FileSystem.objects.create(region=region, filesystem_id="fs-0123abcd")
    return f"/api/efs/filesystems/{fs.pk}/series/"


@pytest.fixture
def auth(api_key) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {api_key()}"}


def test_it_reads_a_range_given_with_any_utc_offset(api_client, auth, url):
    # PostgreSQL refuses offsets past ±15:59; the range is handed to it in UTC.
    got = api_client.get(
        url, {"start": "2026-03-01T23:00:00-20:00", "end": "2026-03-02T21:00:00-20:00"}, **auth
    )
    assert got.status_code == 200, got.json()
    assert got.json()["resolution"] == "hour"


@pytest.mark.parametrize("start", ["2026-13-01T00:00:00Z", "0001-01-01T00:00:00+23:00"])
def test_it_refuses_a_time_that_does_not_exist_with_a_400(api_client, auth, url, start):
    got = api_client.get(url, {"start": start, "end": "2026-03-02T00:00:00Z"}, **auth)
    assert got.status_code == 400
    assert got.json()["error"] == "Invalid input" and "start" in got.json()["fields"]


def test_it_serves_the_series_with_a_format_suffix(api_client, auth, url):
    # The router also routes /series.json/; the action must take the format it passes.
    got = api_client.get(url.replace("/series/", "/series.json/"), **auth)
    assert got.status_code == 200 and got.json()["resolution"] == "minute"


def test_it_compares_the_modes_live_and_stores_the_comparison_in_the_figures(api_client, auth):
    from datetime import timedelta

    from django.utils import timezone

    from apps.efs import history, pricing
    from apps.efs.metrics import GIB, MIB, Sample
    from apps.efs.models import RegionCollection
    from apps.lib.cloudwatch import align

    region = Region.objects.create(account=Account.objects.create(name="prod"), code="us-east-1")
    fs = FileSystem.objects.create(
        region=region,
        filesystem_id="fs-0123abcd",
        size_standard_bytes=10 * GIB,
        throughput_mode="elastic",
    )
    end = align(timezone.now() - timedelta(minutes=3))
    history.save_samples(
        {
            fs.pk: [
                Sample(
                    end - timedelta(minutes=120 - i),
                    metered_bytes=50 * MIB * 60,
                    data_write_bytes=50 * MIB * 60,
                    data_write_count=800.0,
                )
                for i in range(120)
            ]
        }
    )
    url = f"/api/efs/filesystems/{fs.pk}/modes/"
    got = api_client.get(url, {"provision": "peak", "price": "5"}, **auth).json()["comparison"]
    assert [m["mode"] for m in got["modes"]] == ["bursting", "provisioned", "elastic"]
    provisioned = got["modes"][1]
    assert provisioned["provisioned_mibps"] == 50
    assert provisioned["monthly_usd"] == 3 + (50 - 1) * 5  # 10 GiB earns the 1 MiB/s minimum
    # 50 MiB/s written all month: 50 x 3,600 x 730 / 1,024 GB at $0.06.
    assert got["modes"][2]["monthly_usd"] == pytest.approx(
        3 + 50 * 3600 * 730 / 1024 * 0.06, abs=0.01
    )
    assert got["best_mode"] == "provisioned" and got["current_mode"] == "elastic"
    assert got["saving_usd"] == round(got["current_usd"] - provisioned["monthly_usd"], 2)
    assert got["prices_region"] == "us-east-1" and got["prices_note"] == ""
    assert got["workload"]["hours_of_data"] == 2.0
    assert api_client.get(url, {"provision": "max"}, **auth).status_code == 400
    for price in ("cheap", "-1", "nan", "1e9"):
        bad = api_client.get(url, {"price": price}, **auth)
        assert bad.status_code == 400 and "price" in bad.json()["fields"]

    pricing.price_region(RegionCollection.objects.create(region=region), timezone.now())
    figures = api_client.get(f"/api/efs/filesystems/{fs.pk}/", **auth).json()["figures"]
    assert figures["cost_best_mode"] == "provisioned"
    assert figures["cost_elastic_usd"] == got["modes"][2]["monthly_usd"]
    assert figures["cost_reason"].startswith("Provisioning the peak (50 MiB/s) would cost")


def test_it_answers_null_without_enough_data(api_client, auth, url):
    got = api_client.get(url.replace("/series/", "/modes/"), **auth)
    assert got.status_code == 200 and got.json()["comparison"] is None


@pytest.mark.parametrize(
    "query", ["", "?ordering=region", "?ordering=-status&limit=2&offset=1", "?region=eu-west-1"]
)
def test_its_list_rows_are_what_the_serializer_would_write(api_client, auth, query):
    prod = Account.objects.create(name="prod")
    west, east = (Region.objects.create(account=prod, code=c) for c in ("us-west-2", "eu-west-1"))
    now = timezone.now()
    FileSystem.objects.create(
        region=west,
        filesystem_id="fs-1",
        name='b ünïcode "quoted"',
        tags={"Name": "b", "team": ["x", 1]},
        provisioned_mibps=128.5,
        size_total_bytes=2**62,
        created_at=now - timedelta(days=3, microseconds=7),
        collected_until=now,
        status="warning",
        figures={"io_limit_pct": 91.5, "missing": None},
    )
    FileSystem.objects.create(region=east, filesystem_id="fs-2", name="a", status="critical")
    FileSystem.objects.create(region=east, filesystem_id="fs-3", name="c", deleted=now)
    body = api_client.get(f"/api/efs/filesystems/{query}", **auth).json()

    queryset = FileSystemViewSet.queryset.filter(pk__in=[row["id"] for row in body["results"]])
    by_id = {row["id"]: row for row in FileSystemSerializer(queryset, many=True).data}
    assert body["results"] == [json.loads(json.dumps(by_id[row["id"]])) for row in body["results"]]
    assert body["count"] == (1 if "region=" in query else 2)


def test_its_list_orders_by_region_as_the_model_does(api_client, auth):
    prod = Account.objects.create(name="prod")
    # Created in the other order than their codes sort: ordering=region is the region's order.
    for code in ("us-west-2", "eu-west-1"):
        region = Region.objects.create(account=prod, code=code)
        FileSystem.objects.create(region=region, filesystem_id=f"fs-{code}")
    rows = api_client.get("/api/efs/filesystems/?ordering=region", **auth).json()["results"]
    expected = FileSystem.objects.order_by("region", "pk").values_list("filesystem_id", flat=True)
    assert [row["filesystem_id"] for row in rows] == list(expected)


@pytest.fixture
def kept(settings):
    """The list's cache on, empty."""
    from django.core.cache import cache

    settings.VIGIL_API_LIST_CACHE_SECONDS = 60
    cache.clear()
    yield
    cache.clear()


def _list(api_client, auth, query: str = ""):
    """The file system list's answer, and whether it read the rows (else: from the cache)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        got = api_client.get(f"/api/efs/filesystems/{query}", **auth)
    read_rows = any("figures" in q["sql"] for q in queries)
    return got, read_rows


def test_its_kept_list_links_the_next_page_on_the_host_and_scheme_asked(
    api_client, auth, kept, site, settings
):
    """A body kept for one name of the server is not served to another: its links name a host."""
    settings.ALLOWED_HOSTS = ["vigil.example.com", "vigil.internal"]
    for n in range(3):
        FileSystem.objects.create(region=site, filesystem_id=f"fs-{n}")
    asked = [
        ("vigil.example.com", False),
        ("vigil.internal", False),
        ("vigil.example.com", True),
    ]
    for host, secure in asked:
        got = api_client.get("/api/efs/filesystems/?limit=1", HTTP_HOST=host, secure=secure, **auth)
        scheme = "https" if secure else "http"
        assert got.json()["next"].startswith(f"{scheme}://{host}/api/efs/filesystems/"), host


def test_its_list_is_kept_until_a_file_system_changes_then_answers_the_change_at_once(
    api_client, auth, kept, site
):
    fs = FileSystem.objects.create(region=site, filesystem_id="fs-1", status="ok")
    other = FileSystem.objects.create(region=site, filesystem_id="fs-2", status="ok")
    first, read_rows = _list(api_client, auth)
    assert read_rows
    again, read_rows = _list(api_client, auth)
    assert not read_rows and again.content == first.content
    assert again["ETag"] == first["ETag"] and again["Content-Type"] == first["Content-Type"]
    assert _list(api_client, auth, "?limit=1")[1], "another query is another body"

    # A compare-and-set as collection and alerts write it: no save(), no signal.
    FileSystem.objects.filter(pk=fs.pk, status="ok").update(status="critical")
    changed, read_rows = _list(api_client, auth)
    assert read_rows and changed["ETag"] != first["ETag"]
    assert {row["id"]: row["status"] for row in changed.json()["results"]}[fs.pk] == "critical"

    other.delete()
    gone, read_rows = _list(api_client, auth)
    assert read_rows and [row["id"] for row in gone.json()["results"]] == [fs.pk]

    not_modified = api_client.get("/api/efs/filesystems/", HTTP_IF_NONE_MATCH=gone["ETag"], **auth)
    assert not_modified.status_code == 304


def test_its_list_is_never_shared_between_roles(api_client, kept, site, viewer, user):
    from apps.accounts.models import ApiKey

    FileSystem.objects.create(region=site, filesystem_id="fs-1")
    admin_auth = bearer(ApiKey.issue(user, "admin's", read_only=True)[1])
    viewer_auth = bearer(ApiKey.issue(viewer, "viewer's", read_only=True)[1])
    admins, _ = _list(api_client, admin_auth)
    viewers, read_rows = _list(api_client, viewer_auth)
    assert read_rows, "the viewer's first answer is rendered for the viewer, not the admin's kept"
    assert viewers["ETag"] != admins["ETag"]
    assert not _list(api_client, viewer_auth)[1]


def test_a_file_system_write_moves_its_changed_time_whatever_wrote_it(site):
    fs = FileSystem.objects.create(region=site, filesystem_id="fs-1")
    before = FileSystem.objects.get(pk=fs.pk).changed
    FileSystem.objects.filter(pk=fs.pk).update(figures={"io_limit_pct": 1.0})
    after_update = FileSystem.objects.get(pk=fs.pk).changed
    fs.refresh_from_db()
    fs.name = "renamed"
    fs.save()
    after_save = FileSystem.objects.get(pk=fs.pk).changed
    assert before < after_update < after_save


def test_the_changed_triggers_survive_every_migration():
    """A migration that makes SQLite rebuild the table drops its triggers (0012 and 0013 did):
    the last migration must leave both in place, on either database."""
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s",
                ["efs_filesystem"],
            )
        else:
            cursor.execute(
                "SELECT tgname FROM pg_trigger WHERE tgrelid = 'efs_filesystem'::regclass"
                " AND NOT tgisinternal"
            )
        names = {row[0] for row in cursor.fetchall()}
    assert names == {"efs_filesystem_changed", "efs_filesystem_deleted"}


# --- The list's validator kept in Redis with the table's version (apps/lib/versions.py) ---------


@pytest.fixture
def on_redis(redis, settings):
    """Production's cache: a real Redis shared by every process, the list's cache on, nothing
    kept in this process's memory yet."""
    from django.core.cache import cache

    from apps.accounts import keycache
    from apps.api import conditional

    settings.CACHES = {"default": {"BACKEND": "apps.lib.cache.RedisCache", "LOCATION": redis.url}}
    settings.VIGIL_API_LIST_CACHE_SECONDS = 60
    settings.VIGIL_API_KEY_CACHE_SECONDS = 5
    conditional._bodies.clear()
    keycache._here.clear()
    yield cache
    conditional._bodies.clear()
    keycache._here.clear()


def _statuses(api_client, auth) -> dict[str, str]:
    got, _ = _list(api_client, auth)
    assert got.status_code == 200
    return {row["filesystem_id"]: row["status"] for row in got.json()["results"]}


def _write_paths():
    """Every way Vigil writes file system rows, each as a function of (file system, region)."""
    from django.db import connection

    from apps import alerts
    from apps.efs import collect
    from apps.efs.models import RegionCollection
    from apps.lib.status import Status, Verdict

    def compare_and_set(fs, region):  # alerts.record's, with no save() and no signal
        FileSystem.objects.filter(pk=fs.pk, status="ok").update(status="critical")

    def save(fs, region):  # the admin, the API, the pages: a model's save()
        fs.status = "critical"
        fs.save()

    def record(fs, region):  # the alert pipeline's own entry
        alerts.record(fs, Verdict(Status.CRITICAL, "burst credits gone"))

    def collection(fs, region):  # a collection task: one transaction for the region
        RegionCollection.objects.create(region=region)
        collect.judge_region(RegionCollection.objects.get(region=region), timezone.now())

    def raw_sql(fs, region):  # a batch statement on Django's cursor
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE efs_filesystem SET status = %s WHERE id = %s", ["critical", fs.pk]
            )

    def bulk_create(fs, region):  # discovery's new file systems
        FileSystem.objects.bulk_create([FileSystem(region=region, filesystem_id="fs-new")])

    def delete(fs, region):
        fs.delete()

    return [compare_and_set, save, record, collection, raw_sql, bulk_create, delete]


@pytest.mark.parametrize("write", _write_paths(), ids=lambda write: write.__name__)
def test_its_list_on_redis_answers_every_write_at_the_next_request(
    api_client, auth, on_redis, site, write, django_capture_on_commit_callbacks
):
    # Each write committed, as outside a test (a transaction's writes move the version once,
    # after its commit: a write left uncommitted here would hold back those that follow).
    with django_capture_on_commit_callbacks(execute=True):
        fs = FileSystem.objects.create(region=site, filesystem_id="fs-1", status="ok")
        FileSystem.objects.create(region=site, filesystem_id="fs-2", status="ok")
    before = _statuses(api_client, auth)
    assert _list(api_client, auth)[1] is False  # kept: the next request reads no row
    with django_capture_on_commit_callbacks(execute=True):
        write(fs, site)
    after, read_rows = _list(api_client, auth)
    assert read_rows
    expected = {
        row.filesystem_id: row.status for row in FileSystem.objects.filter(deleted__isnull=True)
    }
    assert {row["filesystem_id"]: row["status"] for row in after.json()["results"]} == expected
    assert expected != before


def test_a_repeated_list_on_redis_asks_the_database_nothing(
    api_client, auth, on_redis, site, django_assert_num_queries
):
    FileSystem.objects.create(region=site, filesystem_id="fs-1")
    _list(api_client, auth)  # the key is kept in this process's memory from here on
    first, _ = _list(api_client, auth)
    with django_assert_num_queries(0):  # no statement, so no connection health check either
        again = api_client.get("/api/efs/filesystems/", **auth)
    assert again.content == first.content and again["ETag"] == first["ETag"]


def test_a_write_django_never_saw_shows_once_the_kept_validator_expires(
    api_client, auth, on_redis, site, django_capture_on_commit_callbacks
):
    """``psql`` by hand moves no version: the validator kept beside it lives only
    ``UNSEEN_WRITE_SECONDS``, after which the table is asked again."""
    from django.db import connection

    from apps.api.conditional import UNSEEN_WRITE_SECONDS, _validator_key
    from apps.lib import versions

    with django_capture_on_commit_callbacks(execute=True):
        fs = FileSystem.objects.create(region=site, filesystem_id="fs-1", status="ok")
    assert _statuses(api_client, auth) == {"fs-1": "ok"}
    connection.execute_wrappers.remove(versions.spot_writes)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            FileSystem.objects.filter(pk=fs.pk).update(status="critical")
    finally:
        versions.install(connection=connection)
    assert _statuses(api_client, auth) == {"fs-1": "ok"}  # unseen: the kept validator holds
    name = on_redis.make_and_validate_key(_validator_key("efs_filesystem"))
    assert 0 < on_redis._cache.get_client().ttl(name) <= UNSEEN_WRITE_SECONDS
    on_redis.delete(_validator_key("efs_filesystem"))  # what those seconds do
    assert _statuses(api_client, auth) == {"fs-1": "critical"}


def test_its_list_on_redis_follows_the_table_when_redis_lost_the_version(
    api_client, auth, on_redis, site, django_capture_on_commit_callbacks
):
    from apps.lib import versions

    fs = FileSystem.objects.create(region=site, filesystem_id="fs-1", status="ok")
    assert _statuses(api_client, auth) == {"fs-1": "ok"}
    on_redis.clear()  # a Redis restarted empty: no version, no kept body
    FileSystem.objects.filter(pk=fs.pk).update(status="critical")  # its bump is lost too
    assert on_redis.get(versions.key("efs_filesystem")) is None
    assert _statuses(api_client, auth) == {"fs-1": "critical"}
    assert on_redis.get(versions.key("efs_filesystem")) is not None  # followed from here on

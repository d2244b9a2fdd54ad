"""Table versions in Redis: moved once after each commit that wrote the table through Django."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from apps.efs.models import FileSystem
from apps.lib import versions
from apps.regions.models import Region

pytestmark = pytest.mark.django_db


@pytest.fixture
def on_redis(redis, settings):
    settings.CACHES = {"default": {"BACKEND": "apps.lib.cache.RedisCache", "LOCATION": redis.url}}
    from django.core.cache import cache

    return cache


def version(cache) -> int | None:
    return cache.get(versions.key("efs_filesystem"))


def test_a_transaction_writing_the_table_many_times_moves_its_version_once_on_commit(
    on_redis, site, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        fs = FileSystem.objects.create(region=site, filesystem_id="fs-1")
        FileSystem.objects.filter(pk=fs.pk).update(status="critical")
        fs.save()
        assert version(on_redis) is None  # not before the commit
    assert len(callbacks) == 1
    moved = version(on_redis)
    assert moved is not None and moved > 1_000_000  # starts at a time, never at 1 again
    with django_capture_on_commit_callbacks(execute=True):
        FileSystem.objects.filter(pk=fs.pk).update(status="ok")
    assert version(on_redis) == moved + 1


def test_a_rolled_back_write_moves_nothing_and_the_next_commit_still_does(
    on_redis, site, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(RuntimeError), transaction.atomic():
            FileSystem.objects.create(region=site, filesystem_id="fs-1")
            raise RuntimeError
        assert callbacks == [] and version(on_redis) is None
        FileSystem.objects.create(region=site, filesystem_id="fs-2")
    assert len(callbacks) == 1 and version(on_redis) is not None


def test_reads_and_other_tables_move_nothing(on_redis, site, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        list(FileSystem.objects.all())
        Region.objects.filter(pk=site.pk).update(name="renamed")
        with connection.cursor() as cursor:  # a name that only starts like the table's
            cursor.execute("UPDATE regions_region SET name = 'efs_filesystems'")
    assert callbacks == [] and version(on_redis) is None


def test_nothing_is_bumped_on_a_cache_of_one_process(site, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        FileSystem.objects.create(region=site, filesystem_id="fs-1")
    assert callbacks == []  # locmem: every reader asks the table

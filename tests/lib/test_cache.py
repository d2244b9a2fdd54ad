"""The Redis cache backend: one client per server, and counters in one round trip."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache.backends.locmem import LocMemCache

from apps.lib import cache
from tests.services.workers import RedisServer


@pytest.fixture
def redis_cache(tmp_path) -> Iterator[cache.RedisCache]:
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield cache.RedisCache(server.url, {"KEY_PREFIX": "t"})
    finally:
        server.stop()


def test_it_counts_in_redis_with_the_counter_expiring_from_its_first_count(redis_cache):
    assert [cache.count(redis_cache, "hits", 60) for _ in range(3)] == [1, 2, 3]
    assert redis_cache.get("hits") == 3  # Django's own API reads the counter
    client = redis_cache._cache.get_client()
    key = redis_cache.make_and_validate_key("hits")
    assert 55 <= client.ttl(key) <= 60
    client.expire(key, 1000)
    cache.count(redis_cache, "hits", 60)
    assert client.ttl(key) > 60  # a later count does not move the expiry


def test_it_counts_with_add_and_incr_on_other_backends():
    local = LocMemCache("counts", {})
    assert [cache.count(local, "hits", 60) for _ in range(3)] == [1, 2, 3]


def test_it_counts_in_one_round_trip_through_djangos_cache_proxy(tmp_path, settings):
    """DRF's throttles hold ``django.core.cache.cache``, a proxy: it counted with ``add`` and
    ``incr`` (three commands) until the backend behind the proxy was used; now one script a
    count (``EVALSHA``; the first also loads it)."""
    from django.core.cache import cache as proxy
    from django.core.cache import caches

    server = RedisServer(tmp_path)
    server.start()
    try:
        settings.CACHES = {
            "default": {"BACKEND": "apps.lib.cache.RedisCache", "LOCATION": server.url}
        }
        client = caches["default"]._cache.get_client()
        client.config_resetstat()
        assert [cache.count(proxy, "hits", 60) for _ in range(3)] == [1, 2, 3]
        stats = client.info("commandstats")
        calls = stats["cmdstat_evalsha"]
        assert calls["calls"] - calls.get("failed_calls", 0) - calls.get("rejected_calls", 0) == 3
        assert "cmdstat_exec" not in stats and "cmdstat_multi" not in stats
        assert "cmdstat_exists" not in stats and "cmdstat_get" not in stats
    finally:
        server.stop()


def test_it_reads_several_keys_in_the_counting_round_trip(redis_cache):
    redis_cache.set("short", "revoked")
    redis_cache.set("long", "x" * 500)
    redis_cache.set("number", 7)
    got = cache.count_many(redis_cache, [("hits", 60)], ["short", "missing", "long", "number"])
    assert got == [1, "revoked", None, cache.PRESENT, 7]
    assert cache.count_many(redis_cache, [], ["missing", "short"]) == [None, "revoked"]


def test_a_bumped_version_starts_at_a_time_and_counts_on(redis_cache):
    first = cache.bump(redis_cache, "version")
    assert first > 1_000_000_000 and cache.bump(redis_cache, "version") == first + 1
    assert redis_cache.get("version") == first + 1

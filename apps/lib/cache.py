"""Django's Redis cache, with one Redis client per server kept for the process.

Django's ``RedisCacheClient`` builds a new ``redis.Redis`` around its connection pool for every
operation, and redis-py fills a dictionary of some 170 response callbacks in each: about a fifth
of a millisecond per cache call, several times per API request (its rate limits, the list
cache). A ``redis.Redis`` is safe to share between threads (each command takes a connection
from the pool), so one per server is kept. ``config.settings.base`` puts this backend in place
of Django's when ``CACHE_URL`` is a Redis URL.

``count()`` adds one to a counter that expires (the API's rate limits): one round trip to
Redis, where Django's API takes three (``add``, then ``incr``, which asks ``EXISTS`` first).
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends import redis
from django.core.cache.backends.base import BaseCache
from django.utils.connection import ConnectionProxy


class RedisCacheClient(redis.RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._client(connection_pool=self._get_connection_pool(index))
            self._clients[index] = client
        return client


class RedisCache(redis.RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = RedisCacheClient

    def count(self, key: str, timeout: int) -> int:
        """``SET key 0 EX timeout NX`` and ``INCR key`` in one MULTI/EXEC: the new count."""
        return self.count_many([(key, timeout)])[0]

    def count_many(self, counters: list[tuple[str, int]]) -> list[int]:
        """``count`` of each ``(key, timeout)``, all in one MULTI/EXEC: their new counts."""
        names = [self.make_and_validate_key(key) for key, _ in counters]
        pipeline = self._cache.get_client(names[0], write=True).pipeline(transaction=True)
        for name, (_, timeout) in zip(names, counters, strict=True):
            pipeline.set(name, 0, ex=timeout, nx=True)
            pipeline.incr(name)
        return pipeline.execute()[1::2]


def count_many(cache: BaseCache, counters: list[tuple[str, int]]) -> list[int]:
    """``count`` of each ``(key, timeout)``: in one round trip on Redis."""
    if isinstance(cache, ConnectionProxy):
        cache = cache._connections[cache._alias]
    if isinstance(cache, RedisCache):
        return cache.count_many(counters)
    return [count(cache, key, timeout) for key, timeout in counters]


def count(cache: BaseCache, key: str, timeout: int) -> int:
    """Add one to the counter ``key`` of ``cache``, made with ``timeout`` seconds to live when it
    is missing, and return the count: in one round trip on Redis (``RedisCache.count``), with
    ``add`` and ``incr`` on any other backend. ``cache`` may be ``django.core.cache.cache``
    (DRF's throttles hold it), a proxy to the default backend: the backend behind it counts."""
    if isinstance(cache, ConnectionProxy):
        cache = cache._connections[cache._alias]
    if isinstance(cache, RedisCache):
        return cache.count(key, timeout)
    cache.add(key, 0, timeout)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout)
        return 1

"""Django's Redis cache, with one Redis client per server kept for the process.

Django's ``RedisCacheClient`` builds a new ``redis.Redis`` around its connection pool for every
operation, and redis-py fills a dictionary of some 170 response callbacks in each: about a fifth
of a millisecond per cache call, several times per API request (its rate limits, the list
cache). A ``redis.Redis`` is safe to share between threads (each command takes a connection
from the pool), so one per server is kept. ``config.settings.base`` puts this backend in place
of Django's when ``CACHE_URL`` is a Redis URL.

``count()`` adds one to a counter that expires (the API's rate limits): one round trip to
Redis, where Django's API takes three (``add``, then ``incr``, which asks ``EXISTS`` first);
``count_many()`` counts several and reads more keys in the same round trip (a kept API key's
entry, a table's version: ``apps.lib.versions``); ``bump()`` moves a version (``SET NX`` to the
nanoseconds now, so one lost with Redis never comes back with an old value, then ``INCR``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
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
        self._scripts: dict[int, Any] = {}  # redis.Redis id -> its registered count_many script

    def count(self, key: str, timeout: int) -> int:
        """``SET key 0 EX timeout NX`` and ``INCR key`` in one script: the new count."""
        return self.count_many([(key, timeout)])[0]

    def count_many(self, counters: list[tuple[str, int]], peeks: Sequence[str] = ()) -> list[Any]:
        """``count`` of each ``(key, timeout)``, all in one script (atomic, one command: about
        half the CPU of the same commands in a MULTI/EXEC pipeline): their new counts; then the
        value of each of ``peeks``, in order (``PRESENT`` for any value but a short one: not
        unpickled)."""
        names = [self.make_and_validate_key(key) for key, _ in counters]
        names += [self.make_and_validate_key(key) for key in peeks]
        client = self._cache.get_client(names[0], write=True)
        script = self._scripts.get(id(client))
        if script is None:
            script = self._scripts[id(client)] = client.register_script(_COUNT_MANY)
        answers = script(keys=names, args=[timeout for _, timeout in counters])
        n = len(counters)
        if not peeks:
            return answers
        raw = [*answers[n:], *[None] * (n + len(peeks) - len(answers))]
        serializer = self._cache._serializer
        return [*answers[:n], *(_peeked(serializer, value) for value in raw)]

    def bump(self, key: str) -> int:
        """``SET key <nanoseconds now> NX`` and ``INCR key``: the version's new value."""
        name = self.make_and_validate_key(key)
        client = self._cache.get_client(name, write=True)
        pipe = client.pipeline(transaction=False)
        pipe.set(name, time.time_ns(), nx=True)
        pipe.incr(name)
        return pipe.execute()[1]


#: ``SET key 0 EX timeout NX`` then ``INCR key`` for each counter (KEYS[i], ARGV[i]), then the
#: value of each further key of KEYS (false when it is missing: a nil reply).
_COUNT_MANY = """
local n = #ARGV
local out = {}
for i = 1, n do
  redis.call('SET', KEYS[i], 0, 'EX', ARGV[i], 'NX')
  out[i] = redis.call('INCR', KEYS[i])
end
for i = n + 1, #KEYS do out[i] = redis.call('GET', KEYS[i]) end
return out
"""


#: What ``count_many`` answers for a peeked value it did not unpickle.
PRESENT = object()
_SHORT = 128  # a peeked value this long at most is unpickled (a tombstone); longer ones are not


def _peeked(serializer: Any, raw: bytes | None) -> Any:
    if raw is None:
        return None
    if len(raw) > _SHORT:
        return PRESENT
    return serializer.loads(raw)


def count_many(
    cache: BaseCache, counters: list[tuple[str, int]], peeks: Sequence[str] = ()
) -> list[Any]:
    """``count`` of each ``(key, timeout)``: in one round trip on Redis. The value of each of
    ``peeks`` is read in the same round trip and answered after the counts, in order: None when
    missing, the value when short (a string, a number), else ``PRESENT`` (never unpickled on
    Redis)."""
    cache = backend(cache)
    if isinstance(cache, RedisCache):
        return cache.count_many(counters, peeks)
    counts: list[Any] = [count(cache, key, timeout) for key, timeout in counters]
    for key in peeks:
        value = cache.get(key)
        counts.append(value if value is None or isinstance(value, str | int) else PRESENT)
    return counts


def backend(cache: BaseCache) -> BaseCache:
    """The backend behind ``cache``, which may be ``django.core.cache.cache``, a proxy."""
    if isinstance(cache, ConnectionProxy):
        return cache._connections[cache._alias]
    return cache


def shared(cache: BaseCache) -> bool:
    """Whether ``cache`` is Redis, shared by every process (Django's in-memory cache is one
    per process: what one process writes there, another never reads)."""
    return isinstance(backend(cache), RedisCache)


def bump(cache: BaseCache, key: str) -> int:
    """Move the version ``key`` to a value it never had: one round trip on Redis; ``add`` and
    ``incr`` on any other backend."""
    cache = backend(cache)
    if isinstance(cache, RedisCache):
        return cache.bump(key)
    cache.add(key, time.time_ns(), None)
    return cache.incr(key)


def count(cache: BaseCache, key: str, timeout: int) -> int:
    """Add one to the counter ``key`` of ``cache``, made with ``timeout`` seconds to live when it
    is missing, and return the count: in one round trip on Redis (``RedisCache.count``), with
    ``add`` and ``incr`` on any other backend. ``cache`` may be ``django.core.cache.cache``
    (DRF's throttles hold it), a proxy to the default backend: the backend behind it counts."""
    cache = backend(cache)
    if isinstance(cache, RedisCache):
        return cache.count(key, timeout)
    cache.add(key, 0, timeout)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout)
        return 1

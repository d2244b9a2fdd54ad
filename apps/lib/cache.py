"""Django's Redis cache, with one Redis client per server kept for the process.

Django's ``RedisCacheClient`` builds a new ``redis.Redis`` around its connection pool for every
operation, and redis-py fills a dictionary of some 170 response callbacks in each: about a fifth
of a millisecond per cache call, several times per API request (its rate limits, the list
cache). A ``redis.Redis`` is safe to share between threads (each command takes a connection
from the pool), so one per server is kept. ``config.settings.base`` puts this backend in place
of Django's when ``CACHE_URL`` is a Redis URL.
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends import redis


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

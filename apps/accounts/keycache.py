"""API keys kept in the cache for a few seconds (``VIGIL_API_KEY_CACHE_SECONDS``, 0: off), so
an API request reads no row to know who calls and with which role.

An entry is the ``ApiKey`` with its owner and the owner's group names, under the key's lookup
part; it is put with ``cache.add``, never ``set``. Revoking a key, deactivating its owner or
changing the owner's groups first writes a tombstone over the owner's entries (``forget``,
with ``set``, for longer than an entry lives), so a request that read the row just before the
change cannot put it back: the change holds from the very next request. The secret is never
cached: an entry holds the key's digest, as the table does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.cache import cache

PREFIX = "vigil:apikey"
GONE = "revoked"  # the tombstone
#: A tombstone outlives an entry by this much: the change it guards has committed by then.
TOMBSTONE_SLACK_S = 10
#: Attributes of a user object that hold permissions read during a request: never cached.
_PERMISSION_CACHES = ("_perm_cache", "_user_perm_cache", "_group_perm_cache")


def _seconds() -> int:
    return settings.VIGIL_API_KEY_CACHE_SECONDS


def get(lookup: str) -> Any | None:
    """The cached key of ``lookup``, or None (not cached, off, or a tombstone)."""
    if _seconds() <= 0:
        return None
    try:
        entry = cache.get(f"{PREFIX}:{lookup}")
    except Exception:  # the cache is down: read the row
        return None
    return None if entry is None or entry == GONE else entry


def keep(key: Any) -> None:
    """Cache ``key`` (read from the table just now) unless a tombstone is there."""
    if _seconds() <= 0:
        return
    for name in _PERMISSION_CACHES:
        key.user.__dict__.pop(name, None)
    with contextlib.suppress(Exception):  # the cache is down: the next request reads the row
        cache.add(f"{PREFIX}:{key.lookup}", key, _seconds())


def forget(lookups: Iterable[str]) -> None:
    """Tombstones over these keys' entries, for longer than an entry lives (always written,
    even with the cache off here: a web process with it on may still hold entries)."""
    names = [f"{PREFIX}:{lookup}" for lookup in lookups]
    if names:
        # the cache down: no process reads an entry from it either
        with contextlib.suppress(Exception):
            cache.set_many(dict.fromkeys(names, GONE), 2 * _seconds() + TOMBSTONE_SLACK_S)


def first_touch(key_id: int) -> bool:
    """Whether this request is the first of the minute to record the key's use."""
    if _seconds() <= 0:
        return True
    try:
        return bool(cache.add(f"{PREFIX}:touched:{key_id}", 1, 60))
    except Exception:
        return True

"""API keys kept in the cache for a few seconds (``VIGIL_API_KEY_CACHE_SECONDS``, 0: off), so
an API request reads no row to know who calls and with which role.

An entry (the ``ApiKey``, its owner and the owner's groups, the digest and never the secret) is
put with ``cache.add``; revoking a key or changing its owner first writes a tombstone with
``set`` (``forget``), longer-lived than any entry, so the change holds from the very next
request. Each process also keeps entries in its memory for ``LOCAL_SECONDS`` (``here``), only
provisionally: the API's rate limits check in the same round trip that the shared entry still
holds (``holds``), else the request is authenticated again, in every process alike.
"""

from __future__ import annotations

import contextlib
import time
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
#: A process keeps an entry in its memory this long at most (never longer than the cache does).
LOCAL_SECONDS = 5
#: Entries a process keeps in its memory, the oldest out first.
LOCAL_ENTRIES = 256
_here: dict[str, tuple[float, Any]] = {}  # lookup -> (until, key)


def name(lookup: str) -> str:
    """The cache key of ``lookup``'s entry."""
    return f"{PREFIX}:{lookup}"


def here(lookup: str) -> Any | None:
    """The key of ``lookup`` kept in this process's memory, or None. Provisional: the caller
    must check ``holds`` on the shared entry before the request does anything."""
    kept = _here.get(lookup)
    if kept is None:
        return None
    if kept[0] < time.monotonic():
        _here.pop(lookup, None)
        return None
    key = kept[1]
    for attribute in _PERMISSION_CACHES:
        key.user.__dict__.pop(attribute, None)
    return key


def keep_here(key: Any) -> None:
    seconds = min(_seconds(), LOCAL_SECONDS)
    if seconds <= 0:
        return
    _here.pop(key.lookup, None)
    _here[key.lookup] = (time.monotonic() + seconds, key)
    while len(_here) > LOCAL_ENTRIES:
        _here.pop(next(iter(_here)), None)


def drop_here(lookup: str) -> None:
    _here.pop(lookup, None)


def holds(entry: Any) -> bool:
    """Whether the shared entry read (``None`` when missing) still vouches for a copy kept
    here: present and not a tombstone."""
    return entry is not None and entry != GONE


def _seconds() -> int:
    return settings.VIGIL_API_KEY_CACHE_SECONDS


def get(lookup: str) -> Any | None:
    """The cached key of ``lookup``, or None (not cached, off, or a tombstone)."""
    if _seconds() <= 0:
        return None
    try:
        entry = cache.get(name(lookup))
    except Exception:  # the cache is down: read the row
        return None
    if entry is None or entry == GONE:
        return None
    keep_here(entry)
    return entry


def keep(key: Any) -> None:
    """Cache ``key`` (read from the table just now) unless a tombstone is there."""
    if _seconds() <= 0:
        return
    for attribute in _PERMISSION_CACHES:
        key.user.__dict__.pop(attribute, None)
    try:
        added = cache.add(name(key.lookup), key, _seconds())
    except Exception:  # the cache is down: the next request reads the row
        return
    if added:
        keep_here(key)


def forget(lookups: Iterable[str]) -> None:
    """Tombstones over these keys' entries, for longer than an entry lives (always written,
    even with the cache off here: a web process with it on may still hold entries)."""
    lookups = list(lookups)
    for lookup in lookups:
        drop_here(lookup)
    names = [name(lookup) for lookup in lookups]
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

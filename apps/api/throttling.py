"""API rate limits per caller, counted in Django's cache (Redis in production).

A caller is an API key, a push token's subject, a session's user or an address (``caller``),
with separate read and write budgets, and a second pair per user whatever key or session they
use (``owner``). Each budget is one atomic increment in a fixed window, all of a request's in one
round trip (``apps.lib.cache.count_many``), where DRF rewrites a list of timestamps whole and
loses counts when two processes race; over budget the answer is 429 with ``Retry-After``, and
with the cache down requests go through (a warning logged). The same round trip checks that a
key taken from the process's memory (``apps.accounts.keycache``) is still valid, and reads
what the view asks for (its ``peeks``: the file system list's version). Budgets and settings:
docs/api.md.
"""

from __future__ import annotations

import logging
from typing import Any

from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from apps.accounts import keycache
from apps.accounts.authentication import confirm_kept_key
from apps.accounts.models import ApiKey
from apps.lib import cache
from apps.lib.pushtoken import PushToken

log = logging.getLogger(__name__)


def caller(request: Request) -> str:
    """Whose budget a request spends: ``key:<id>``, ``push:<model>:<id>`` (a push token's
    subject), ``user:<id>`` or an address."""
    auth = request.auth
    if isinstance(auth, ApiKey):
        return f"key:{auth.pk}"
    if isinstance(auth, PushToken):
        subject = auth.subject
        return f"push:{subject._meta.label_lower}:{subject.pk}"
    if request.user and request.user.is_authenticated:
        return f"user:{request.user.pk}"
    return f"addr:{request.META.get('REMOTE_ADDR', '')}"


def owner(request: Request) -> str | None:
    """Whose per-user budget a request spends: the key's owner or the session's user."""
    user = request.user
    if user is not None and user.is_authenticated:
        return f"user:{user.pk}"
    return None


class _FixedWindowThrottle(SimpleRateThrottle):
    reads: bool
    cache_format = "vigil:throttle:%(scope)s:%(ident)s"

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def identity(self, request: Request) -> str | None:
        return caller(request)

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if (request.method in SAFE_METHODS) != self.reads:
            return None
        ident = self.identity(request)
        if ident is None:
            return None
        return self.cache_format % {"scope": self.scope, "ident": ident}

    def counter(self, request: Request, view: Any, now: float) -> tuple[str, int] | None:
        """This throttle's counter for the request, ``(key, seconds to live)``, or None."""
        if self.rate is None:
            return None
        key = self.get_cache_key(request, view)
        if key is None:
            return None
        return f"{key}:{int(now // self.duration)}", self.duration + 1

    #: ``ApiKeyAuthentication`` may take a key from the process's memory: ``_counts`` checks it.
    checks_kept_keys = True

    def allow_request(self, request: Request, view: Any) -> bool:
        counts = _counts(request, view, self.timer())
        if counts is None:
            return True
        now = request._vigil_throttle_now  # the moment counted: every throttle's same window
        mine = self.counter(request, view, now)
        if mine is None:
            return True
        window = int(now // self.duration)
        self.wait_seconds = (window + 1) * self.duration - now
        return counts.get(mine[0], 0) <= self.num_requests

    def wait(self) -> float:
        return self.wait_seconds


def _counts(request: Request, view: Any, now: float) -> dict[str, int] | None:
    """Every throttle's count for this request, counted once in one round trip (the first
    throttle asks, or ``apps.api.fastpath`` before the request reached DRF; the others read it
    from the request); None if the cache is down."""
    counts = getattr(request, "_vigil_throttle_counts", None)
    if counts is not None:
        return counts
    counters = [
        counter
        for throttle in view.get_throttles()
        if isinstance(throttle, _FixedWindowThrottle)
        and (counter := throttle.counter(request, view, now)) is not None
    ]
    kept = getattr(request, "_vigil_key_here", None)  # a key from the process's memory
    peeks = [keycache.name(kept)] if kept else []
    wanted = getattr(view, "peeks", None)  # what the view reads in the same round trip
    if wanted is not None:
        peeks += wanted(request)
    try:
        counted = (
            cache.count_many(SimpleRateThrottle.cache, counters, peeks) if counters or peeks else []
        )
    except Exception as exc:  # the cache is down: count nothing, refuse nothing
        log.warning("API rate limit not counted: cache unavailable (%s)", type(exc).__name__)
        if kept:  # but the key is read again (from the table, the cache being down)
            confirm_kept_key(request, view, holds=False)
        return None
    values = counted[len(counters) :]
    if kept:
        confirm_kept_key(request, view, holds=keycache.holds(values.pop(0)))
    request._vigil_peeked = dict(zip(peeks[1:] if kept else peeks, values, strict=True))
    counts = {key: n for (key, _), n in zip(counters, counted[: len(counters)], strict=True)}
    request._vigil_throttle_counts = counts
    request._vigil_throttle_now = now
    return counts


class ReadThrottle(_FixedWindowThrottle):
    """GET, HEAD and OPTIONS: ``VIGIL_API_RATE_READ`` per caller."""

    scope = "read"
    reads = True


class WriteThrottle(_FixedWindowThrottle):
    """POST, PUT, PATCH and DELETE: ``VIGIL_API_RATE_WRITE`` per caller."""

    scope = "write"
    reads = False


class UserReadThrottle(ReadThrottle):
    """Reads per user, all keys and the session together: ``VIGIL_API_RATE_USER_READ``."""

    scope = "user_read"

    def identity(self, request: Request) -> str | None:
        return owner(request)


class UserWriteThrottle(WriteThrottle):
    """Writes per user, all keys and the session together: ``VIGIL_API_RATE_USER_WRITE``."""

    scope = "user_write"

    def identity(self, request: Request) -> str | None:
        return owner(request)

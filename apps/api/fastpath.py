"""A repeated API list answered before sessions, CSRF, users and DRF: the same bytes, cheaper.

``FastPath`` is a middleware early in the stack. When DRF has answered a cached list
(``conditional.CachedList``) to a request with an API key and no cookie, it keeps what left the
rest of the stack, status, headers and body, under what decides that answer (the path with its
query, ``Accept``, whether ``Accept-Encoding`` takes gzip, host, scheme, the key's role and the
table's validator). A later request of that shape whose key this process holds in memory
(``keycache.here``) is answered from it after one round trip to Redis that counts the key's rate
limits (the view's own throttles, the same counters) and reads the key's shared entry and the
table's version and validator, as DRF's path does (``throttling._counts``). Anything else, and
any doubt (a revoked key or a changed role: the entry missing or a tombstone; a budget spent; a
validator moved; a conditional answer not seen yet), goes on through the whole stack, with the
counts already made passed along so that nothing is counted twice: DRF then gives its own 401,
403 or 429. What callers see: docs/api.md, "Cached lists".
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from django.core.cache import cache
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse
from django.utils.cache import get_conditional_response
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.throttling import SimpleRateThrottle

from apps.accounts import keycache
from apps.accounts.authentication import raw_key
from apps.accounts.models import LOOKUP_LENGTH
from apps.accounts.roles import role_of
from apps.lib import cache as caches
from apps.lib import compression

#: Answers a process keeps, the oldest out first (as many as ``conditional.LOCAL_BODIES``).
LOCAL_ANSWERS = 32
_PREFIX = "/api/"
_CONDITIONS_NOT_HANDLED = ("HTTP_IF_MATCH", "HTTP_IF_UNMODIFIED_SINCE", "HTTP_IF_RANGE")


@dataclass(frozen=True, slots=True)
class Answerable:
    """What ``CachedList.list`` says of its answer: the validator it holds under (the one kept
    beside the table's version), the caller's role, how long the body is kept, and what the
    view's rate limits count and read."""

    validator: str
    role: str
    seconds: int
    throttles: tuple[type, ...]
    peeks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Kept:
    until: float
    validator: str
    etag: str
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    throttles: tuple[type, ...]
    peeks: tuple[str, ...]


_answers: dict[tuple, _Kept] = {}
#: Requests this process answered here (bench/load_wsgi.py prints the share; tests read it).
stats = {"answered": 0}


def forget_all() -> None:
    """Drop every kept answer (tests)."""
    _answers.clear()


def _eligible(request: HttpRequest) -> str | None:
    """The API key of a request the fast path may take, or None: not a GET of /api/, no key
    (or a malformed header), a cookie (a session, a time zone), a condition it does not
    evaluate, or no shared cache."""
    meta = request.META
    if (
        request.method != "GET"
        or not request.path_info.startswith(_PREFIX)
        or meta.get("HTTP_COOKIE")
        or any(meta.get(name) for name in _CONDITIONS_NOT_HANDLED)
        or not caches.shared(cache)
    ):
        return None
    try:
        return raw_key(meta)
    except AuthenticationFailed:
        return None


def _shape(request: HttpRequest) -> tuple | None:
    """What decides a list's answer (its coding too), but for the role; None for a host
    ``ALLOWED_HOSTS`` refuses (the stack answers it as it does today)."""
    try:
        host = request.get_host()
    except DisallowedHost:
        return None
    meta = request.META
    return (
        request.get_full_path(),
        meta.get("HTTP_ACCEPT", ""),
        compression.accepts_gzip(meta),
        host,
        request.is_secure(),
    )


def kept_key(raw: str) -> Any | None:
    """The API key ``raw`` from this process's memory, or None (not kept, or not this key)."""
    if len(raw) <= 4 + LOOKUP_LENGTH:
        return None
    key = keycache.here(raw[4 : 4 + LOOKUP_LENGTH])
    if key is None or key.revoked is not None or not key.opens(raw):
        return None
    return key


def count(
    request: HttpRequest, key: Any, kept: _Kept
) -> tuple[list[tuple[Any, tuple]], dict, dict, float] | None:
    """The view's rate limits counted for ``key``, and the key's shared entry and the peeks
    read, in one round trip: (limits, counts, peeked, now), each limit a throttle with its
    counter, or None if the cache is down."""
    now = time.time()
    caller = SimpleNamespace(method=request.method, auth=key, user=key.user, META=request.META)
    limits = []
    for throttle_class in kept.throttles:
        throttle = throttle_class()
        counter = throttle.counter(caller, None, now)
        if counter is not None:
            limits.append((throttle, counter))
    names = [keycache.name(key.lookup), *kept.peeks]
    try:
        values = caches.count_many(SimpleRateThrottle.cache, [c for _, c in limits], names)
    except Exception:  # the cache is down: DRF's path counts nothing and reads the table
        return None
    counts = {counter[0]: n for (_, counter), n in zip(limits, values, strict=False)}
    peeked = dict(zip(names, values[len(limits) :], strict=True))
    return limits, counts, peeked, now


def within_budgets(limits: list[tuple[Any, tuple]], counts: dict) -> bool:
    return all(counts.get(counter[0], 0) <= throttle.num_requests for throttle, counter in limits)


class FastPath:
    """Middleware, after ``SecurityMiddleware`` (its redirect to HTTPS and its headers hold for
    both paths) and before the sessions: see the module's docstring."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        raw = _eligible(request)
        shape = _shape(request) if raw is not None else None
        if shape is None:
            return self.get_response(request)
        answer = self.answer(request, shape, raw)
        if answer is not None:
            return answer
        response = self.get_response(request)
        self.keep(request, shape, response)
        return response

    def answer(self, request: HttpRequest, shape: tuple, raw: str) -> HttpResponse | None:
        key = kept_key(raw)
        if key is None:
            return None
        role = role_of(key.user)
        full, not_modified = _answers.get((*shape, role, 200)), _answers.get((*shape, role, 304))
        kept = full or not_modified
        if kept is None or kept.until < time.monotonic():
            return None
        if request.META.get("HTTP_IF_NONE_MATCH"):
            condition = get_conditional_response(request, etag=kept.etag)
            if condition is not None:
                if condition.status_code != 304:
                    return None  # 412: DRF's path says it
                kept = not_modified
            else:
                kept = full
            if kept is None or kept.until < time.monotonic():
                return None
        counted = count(request, key, kept)
        if counted is None:
            return None
        limits, counts, peeked, now = counted
        # DRF's path, if it is taken now, uses these counts and reads: nothing twice.
        request._vigil_throttle_counts = counts
        request._vigil_throttle_now = now
        request._vigil_peeked = {name: peeked[name] for name in kept.peeks}
        if not keycache.holds(peeked[keycache.name(key.lookup)]):
            keycache.drop_here(key.lookup)  # revoked, or changed: DRF reads it again
            return None
        if not within_budgets(limits, counts):
            return None  # DRF answers its 429
        version, validator = (peeked[name] for name in kept.peeks)
        if (
            version is None
            or not isinstance(validator, str)
            or not validator.startswith(f"{version}|")
            or validator != kept.validator
        ):
            return None
        key.touch()
        stats["answered"] += 1
        response = HttpResponse(kept.body, status=kept.status)
        for name in list(response.headers):
            del response.headers[name]
        for name, value in kept.headers:
            response.headers[name] = value
        return response

    def keep(self, request: HttpRequest, shape: tuple, response: HttpResponse) -> None:
        answerable = getattr(response, "vigil_fast_answer", None)
        if (
            answerable is None
            or response.status_code not in (200, 304)
            or response.cookies
            or response.streaming
            or not all(getattr(t, "checks_kept_keys", False) for t in answerable.throttles)
        ):
            return
        etag = response.get("ETag")
        if not etag:
            return
        other = (*shape, answerable.role, 304 if response.status_code == 200 else 200)
        if (kept := _answers.get(other)) is not None and kept.validator != answerable.validator:
            _answers.pop(other, None)  # a 200 and a 304 kept for one shape share their ETag
        _answers.pop((*shape, answerable.role, response.status_code), None)
        _answers[(*shape, answerable.role, response.status_code)] = _Kept(
            until=time.monotonic() + answerable.seconds,
            validator=answerable.validator,
            etag=etag,
            status=response.status_code,
            headers=tuple(response.items()),
            body=response.content,
            throttles=answerable.throttles,
            peeks=answerable.peeks,
        )
        # another thread of a gthread worker may trim at the same moment
        with contextlib.suppress(RuntimeError, StopIteration):
            while len(_answers) > LOCAL_ANSWERS:
                _answers.pop(next(iter(_answers)), None)

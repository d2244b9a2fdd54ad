"""Conditional GET for the API: ``If-None-Match`` / ``If-Modified-Since`` answered with 304.

Three kinds of validators, by what is cheap and still exact: ``ConditionalGet`` (every viewset:
an ``ETag`` hashed from the rendered body, exact whatever changed the rows; a 304 saves the
transfer, not the queries), ``AppendOnlyList`` (rows only ever inserted or pruned: two index
lookups give ``Last-Modified`` and an ``ETag`` before the page is read) and ``CachedList``
(polled configuration lists: the body kept under a tag from ``list_validator()``, the path,
the format and the caller's role and time zone; on Redis the validator itself kept beside the
table's version, ``apps.lib.versions``, so a repeated list asks the database nothing). What
callers see: docs/api.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from datetime import datetime
from functools import partial
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.http import HttpResponse
from django.utils import timezone
from django.utils.cache import (
    get_conditional_response,
    patch_cache_control,
    patch_vary_headers,
    set_response_etag,
)
from django.utils.http import http_date, quote_etag
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework import mixins, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.models import ApiKey
from apps.accounts.roles import role_of
from apps.api import fastpath
from apps.api.lists import KeysetPagination, keyset_field
from apps.lib import cache as caches
from apps.lib import compression, versions

READS = ("GET", "HEAD")
#: Rendered list bodies a process keeps in its memory (``CachedList``), the oldest out first.
LOCAL_BODIES = 32
_bodies: dict[str, tuple[float, str, bytes]] = {}  # key -> (until, content type, body)
#: A validator kept with a table's version holds at most this long, so that a write Django did
#: not see (no version moved: ``psql``, a restore) shows within it.
UNSEEN_WRITE_SECONDS = 2


def _kept_here(key: str) -> tuple[str, bytes] | None:
    kept = _bodies.get(key)
    if kept is None or kept[0] < time.monotonic():
        return None
    return kept[1], kept[2]


def _keep_here(key: str, seconds: int, content_type: str, body: bytes) -> None:
    _bodies.pop(key, None)
    _bodies[key] = (time.monotonic() + seconds, content_type, body)
    while len(_bodies) > LOCAL_BODIES:
        _bodies.pop(next(iter(_bodies)), None)


def _answer_conditionally(request: Any, response: Response) -> HttpResponse:
    """Post-render callback: ETag from the body, then 304 if the client has it already."""
    set_response_etag(response)
    return get_conditional_response(request, etag=response.get("ETag"), response=response)


class ConditionalGet:
    """Every successful read gets an ``ETag`` from its body and honours ``If-None-Match``.

    ``Cache-Control: private, no-cache``: the answer depends on the caller's key, and a client
    that keeps it must check it again (cheaply, with the ETag) before using it.
    """

    def finalize_response(
        self, request: Request, response: HttpResponse, *args: Any, **kwargs: Any
    ) -> HttpResponse:
        response = super().finalize_response(request, response, *args, **kwargs)
        if request.method not in READS:
            return response
        if 200 <= response.status_code < 300 or response.status_code == 304:
            patch_cache_control(response, private=True, no_cache=True)
            if isinstance(response, Response) and not response.has_header("ETag"):
                response.add_post_render_callback(partial(_answer_conditionally, request._request))
        return response


class CreateListRetrieveDestroyViewSet(
    ConditionalGet,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Rows that are made and ended, never edited (API keys, silences): no PUT or PATCH."""


class AppendOnlyList(ConditionalGet):
    """Keyset pages, and ``list()`` answers 304 from two index lookups before the page is read.

    ``ordering`` is the key: the row's insertion time, descending, then ``-pk``; ``?ordering=``
    is not offered (a keyset has one order). The newest and the oldest row by that key (two
    index lookups over the filtered queryset, no scan as an aggregate would make) give
    ``Last-Modified`` and the ``ETag``: a new row moves the newest, expiry the oldest.
    ``If-Modified-Since`` has HTTP's one-second resolution; ``If-None-Match`` is exact.
    """

    pagination_class = KeysetPagination
    filter_backends = [DjangoFilterBackend]
    ordering = ["-created", "-pk"]

    def list(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        queryset = self.filter_queryset(self.get_queryset())
        time_field = keyset_field(self)
        key = (time_field, "pk")
        newest = queryset.order_by(f"-{time_field}", "-pk").values_list(*key).first()
        oldest = newest and queryset.order_by(time_field, "pk").values_list(*key).first()
        fingerprint = "|".join(
            str(part)
            for part in (newest, oldest, request.get_full_path(), request.accepted_renderer.format)
        )
        etag = quote_etag(hashlib.sha256(fingerprint.encode()).hexdigest()[:32])
        changed = newest and int(newest[0].timestamp())
        not_modified = get_conditional_response(request._request, etag=etag, last_modified=changed)
        response = not_modified or super().list(request, *args, **kwargs)
        response["ETag"] = etag
        if changed:
            response["Last-Modified"] = http_date(changed)
        return response


class CachedList(ConditionalGet):
    """``list()`` answered from the cache while the view's ``list_validator()`` holds.

    ``list_validator()`` returns what moves with every change of the rows the list shows (for
    the file systems: their newest ``changed``, kept by triggers); it must be much cheaper than
    the list. Only JSON is cached (the browsable API shows the user and a CSRF
    token). No ``Last-Modified``: HTTP's one-second dates would miss two writes in a second; the
    ``ETag`` is exact. The tag also holds the URL asked (scheme, host, path and query: the
    page's links name them), the format and the caller's role and time zone, so callers of
    different roles never share a body. A body is kept in the cache for
    ``VIGIL_API_LIST_CACHE_SECONDS`` and in the process's memory too (the last
    ``LOCAL_BODIES``): a body under a tag is the same wherever it is kept.

    On Redis the validator is kept too (``versioned_table``): stored beside the table's version
    (``apps.lib.versions``, moved after every commit that wrote the table through Django) for
    ``UNSEEN_WRITE_SECONDS``, both read in the rate limits' round trip (``peeks``). While the
    version is the one stored with it the request asks the database nothing (no connection, so
    no ``CONN_HEALTH_CHECKS`` either); else the table is asked and the answer stored under the
    version read before. A write through Django shows in the next answer; one Django never saw
    (``psql``) within ``UNSEEN_WRITE_SECONDS``.
    """

    #: The table whose version (``apps.lib.versions``) says when ``list_validator()`` may have
    #: moved; None: ask ``list_validator()`` on every request.
    versioned_table: str | None = None

    def list_validator(self) -> tuple:
        raise NotImplementedError

    def peeks(self, request: Request) -> list[str]:
        """What the rate limits read for this view in their round trip: the version and the
        validator kept with it (a JSON list on a shared cache only)."""
        if not self._versioned(request):
            return []
        return [versions.key(self.versioned_table), _validator_key(self.versioned_table)]

    def _versioned(self, request: Request) -> bool:
        return (
            self.versioned_table is not None
            and self.action == "list"
            and request.accepted_renderer.format == "json"
            and caches.shared(cache)
        )

    def current_validator(self, request: Request) -> tuple:
        """``list_validator()``, from the shared cache while the table's version stands."""
        if not self._versioned(request):
            return self.list_validator()
        names = self.peeks(request)
        peeked = getattr(request, "_vigil_peeked", None) or {}
        if names[0] not in peeked:  # no rate limits asked (none, or the cache down)
            try:
                peeked = cache.get_many(names)
            except Exception:  # the cache is down: the table says
                return self.list_validator()
        version, kept = peeked.get(names[0]), peeked.get(names[1])
        if version is not None and isinstance(kept, str) and kept.startswith(f"{version}|"):
            request._vigil_kept_validator = kept
            return (kept,)
        fresh = f"{version}|{_compact(self.list_validator())}"
        try:
            if version is None:  # the first reader (or Redis lost it): a version to follow
                cache.add(names[0], time.time_ns(), None)
            else:
                cache.set(names[1], fresh, UNSEEN_WRITE_SECONDS)
                request._vigil_kept_validator = fresh
        except Exception:  # the cache is down: the next request asks the table again
            pass
        return (fresh,)

    def list(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        seconds = settings.VIGIL_API_LIST_CACHE_SECONDS
        if request.accepted_renderer.format != "json":
            return super().list(request, *args, **kwargs)
        fingerprint = "|".join(
            str(part)
            for part in (
                *self.current_validator(request),
                request.build_absolute_uri(),  # the host and scheme too: the links name them
                request.accepted_media_type,
                role_of(request.user),
                timezone.get_current_timezone_name(),
            )
        )
        digest = hashlib.sha256(fingerprint.encode()).hexdigest()[:32]
        # gzip only where the body is kept: compressed once, then served as kept.
        gzipped = seconds > 0 and compression.accepts_gzip(request.META)
        etag = quote_etag(f"{digest}-gzip" if gzipped else digest)  # one tag per coding
        response = get_conditional_response(request._request, etag=etag)
        key = f"vigil:api:list:{digest}"
        if response is None and seconds > 0 and (kept := _kept(key, seconds)) is not None:
            content_type, body = kept
            response = HttpResponse(body, content_type=content_type)
            if gzipped:
                _encode(response, key, seconds)
        if response is None:
            response = super().list(request, *args, **kwargs)
            if seconds > 0:
                response.add_post_render_callback(partial(_keep, key, seconds, gzipped))
        response["ETag"] = etag
        if seconds > 0:
            patch_vary_headers(response, ["Accept-Encoding"])
        kept_validator = getattr(request, "_vigil_kept_validator", None)
        if seconds > 0 and kept_validator is not None and isinstance(request.auth, ApiKey):
            # What apps.api.fastpath needs to answer this request again before DRF.
            response.vigil_fast_answer = fastpath.Answerable(
                validator=kept_validator,
                role=role_of(request.user),
                seconds=seconds,
                throttles=tuple(type(throttle) for throttle in self.get_throttles()),
                peeks=tuple(self.peeks(request)),
            )
        return response


def _validator_key(table: str) -> str:
    return f"vigil:api:validator:{table}"


def _compact(validator: tuple) -> str:
    """A validator as a short string (a time as its microseconds): kept beside the version."""
    return ",".join(
        f"{int(part.timestamp())}{part.microsecond:06}" if isinstance(part, datetime) else str(part)
        for part in validator
    )


def _shared_body(key: str) -> tuple[str, bytes] | None:
    try:
        return cache.get(key)
    except Exception:  # the cache is down: the list is read from the table
        return None


def _kept(key: str, seconds: int) -> tuple[str, bytes] | None:
    """The body kept under ``key``: this process's, else the shared cache's (then kept here)."""
    kept = _kept_here(key)
    if kept is None and (kept := _shared_body(key)) is not None:
        _keep_here(key, seconds, *kept)
    return kept


def _keep_everywhere(key: str, seconds: int, content_type: str, body: bytes) -> None:
    with contextlib.suppress(Exception):  # the cache down: kept in this process only
        cache.set(key, (content_type, body), seconds)
    _keep_here(key, seconds, content_type, body)


def _encode(response: HttpResponse, key: str, seconds: int) -> None:
    """Send ``response``'s body (the one kept under ``key``) gzipped, compressed once: the
    compressed body is kept beside it."""
    if len(response.content) < compression.MIN_SIZE:
        return
    kept = _kept(f"{key}:gzip", seconds)
    if kept is None:
        kept = (response["Content-Type"], compression.compress(response.content))
        _keep_everywhere(f"{key}:gzip", seconds, *kept)
    response.content = kept[1]
    response["Content-Encoding"] = "gzip"


def _keep(key: str, seconds: int, gzipped: bool, response: HttpResponse) -> None:
    if response.status_code == 200:
        _keep_everywhere(key, seconds, response["Content-Type"], response.content)
        if gzipped:
            _encode(response, key, seconds)

"""The fast path for repeated API lists (apps/api/fastpath.py), on a real Redis: the same bytes
and headers as DRF's answer for the same request, and every refusal DRF's own."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime

import pytest
import time_machine

from apps.accounts.models import ApiKey
from apps.api import conditional, fastpath
from apps.efs.models import FileSystem
from tests.helpers import bearer

pytestmark = pytest.mark.django_db

URL = "/api/efs/filesystems/"
# 10 s into a minute: a rate limit's window has 50 s left (as tests/api/test_throttling.py).
NOW = datetime(2026, 3, 2, 9, 30, 10, tzinfo=UTC)


@pytest.fixture
def on_redis(redis, settings, django_capture_on_commit_callbacks):
    """Production's cache (a real Redis of the test's own), the list's cache on, nothing kept in
    this process's memory yet, and a few file systems written as outside a test (committed)."""
    from django.core.cache import cache

    from apps.accounts import keycache
    from apps.regions.models import Region

    settings.CACHES = {
        "default": {
            "BACKEND": "apps.lib.cache.RedisCache",
            "LOCATION": redis.url,
            "KEY_PREFIX": "test-fastpath",
        }
    }
    settings.VIGIL_API_LIST_CACHE_SECONDS = 60
    settings.VIGIL_API_KEY_CACHE_SECONDS = 5
    conditional._bodies.clear()
    keycache._here.clear()
    fastpath.forget_all()
    with django_capture_on_commit_callbacks(execute=True):
        site = Region.objects.create(kind=Region.Kind.SITE, code="lab", name="Lab")
        for n, status in enumerate(["ok", "warning", "ok"]):
            FileSystem.objects.create(
                region=site, filesystem_id=f"fs-{n}", name=f"n{n}", status=status
            )
    with time_machine.travel(NOW, tick=False):
        yield cache
    conditional._bodies.clear()
    keycache._here.clear()
    fastpath.forget_all()


def _get(client, url=URL, **headers):
    """The answer, and whether the fast path gave it."""
    before = fastpath.stats["answered"]
    got = client.get(url, **headers)
    return got, fastpath.stats["answered"] > before


def _same(fast, drf) -> None:
    assert fast.status_code == drf.status_code
    assert fast.content == drf.content
    assert dict(fast.items()) == dict(drf.items())


@pytest.mark.parametrize(
    ("query", "accept"),
    [
        ("", None),
        ("?limit=2", None),
        ("?limit=1&offset=1", None),  # pagination: next and previous links
        ("?status=ok", None),  # a filter
        ("?ordering=-name", None),
        ("?format=json", None),
        ("", "application/json"),
        ("", "*/*"),
    ],
)
def test_it_answers_a_repeated_list_with_the_bytes_and_headers_drf_gave(
    api_client, api_key, on_redis, query, accept
):
    auth = bearer(api_key())
    if accept:
        auth["HTTP_ACCEPT"] = accept
    drf, fast_first = _get(api_client, URL + query, **auth)
    assert drf.status_code == 200 and not fast_first
    fast, answered = _get(api_client, URL + query, **auth)
    assert answered
    _same(fast, drf)
    for name in ("ETag", "Cache-Control", "Vary", "Allow", "Content-Type", "Content-Length"):
        assert name in fast


def test_it_answers_if_none_match_with_the_304_drf_gave(api_client, api_key, on_redis):
    auth = bearer(api_key())
    full, _ = _get(api_client, **auth)
    drf_304, fast = _get(api_client, HTTP_IF_NONE_MATCH=full["ETag"], **auth)
    assert drf_304.status_code == 304 and not fast  # a 304 not seen yet: DRF's path
    again, fast = _get(api_client, HTTP_IF_NONE_MATCH=full["ETag"], **auth)
    assert fast
    _same(again, drf_304)
    other, fast = _get(api_client, HTTP_IF_NONE_MATCH='"something else"', **auth)
    assert fast
    _same(other, full)


def test_it_leaves_conditions_it_does_not_evaluate_to_drf(api_client, api_key, on_redis):
    auth = bearer(api_key())
    full, _ = _get(api_client, **auth)
    _get(api_client, **auth)
    got, fast = _get(api_client, HTTP_IF_MATCH='"nothing like it"', **auth)
    assert not fast and got.status_code == 412


def test_a_revoked_key_is_refused_at_the_very_next_request_as_drf_refuses_it(
    api_client, api_key, on_redis
):
    raw = api_key()
    auth = bearer(raw)
    _get(api_client, **auth)
    assert _get(api_client, **auth)[1]  # answered here from now on
    ApiKey.objects.get(lookup=raw[4:12]).revoke()
    refused, fast = _get(api_client, **auth)
    assert not fast and refused.status_code == 401
    assert refused.json() == {"error": "Invalid or revoked API key"}
    unknown, _ = _get(api_client, **bearer(raw[:12] + "x" * (len(raw) - 12)))
    assert refused.content == unknown.content
    assert dict(refused.items()) == dict(unknown.items())


def test_a_deactivated_owners_key_is_refused_at_the_very_next_request(
    api_client, api_key, on_redis, user
):
    auth = bearer(api_key())
    _get(api_client, **auth)
    assert _get(api_client, **auth)[1]
    user.is_active = False
    user.save()
    refused, fast = _get(api_client, **auth)
    assert not fast and refused.status_code == 401


def test_a_lowered_role_is_answered_for_the_new_role_at_the_very_next_request(
    api_client, api_key, on_redis, user
):
    from apps.accounts import keycache

    raw = api_key()
    auth = bearer(raw)
    as_admin, _ = _get(api_client, **auth)
    assert _get(api_client, **auth)[1]
    user.groups.clear()  # admin -> viewer
    as_viewer, fast = _get(api_client, **auth)
    assert not fast and as_viewer.status_code == 200
    assert as_viewer["ETag"] != as_admin["ETag"]  # the role is part of the list's tag
    # While the tombstone lives no process keeps the key: every request is DRF's. Once it
    # has expired, the key is kept again, with its new role.
    assert not _get(api_client, **auth)[1]
    on_redis.delete(keycache.name(raw[4:12]))
    assert not _get(api_client, **auth)[1]
    fast_viewer, fast = _get(api_client, **auth)
    assert fast
    _same(fast_viewer, as_viewer)
    # What DRF answers the viewer with nothing kept anywhere in this process:
    fastpath.forget_all()
    keycache._here.clear()
    drf_viewer, fast = _get(api_client, **auth)
    assert not fast
    _same(drf_viewer, as_viewer)


def test_it_counts_each_request_once_and_leaves_the_429_to_drf(
    api_client, api_key, on_redis, settings
):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"read": "3/min", "write": "2/min"},
    }
    raw = api_key()
    auth = bearer(raw)
    answers = [_get(api_client, **auth) for _ in range(4)]
    assert [(got.status_code, fast) for got, fast in answers] == [
        (200, False),
        (200, True),
        (200, True),
        (429, False),
    ]
    refused = answers[3][0]
    assert refused["Retry-After"] == "50"
    assert refused.json() == {"error": "Request was throttled. Expected available in 50 seconds."}
    key = ApiKey.objects.get(lookup=raw[4:12])
    window = int(NOW.timestamp() // 60)
    assert on_redis.get(f"vigil:throttle:read:key:{key.pk}:{window}") == 4  # once each
    # A second key of the same owner has its own budget; the owner's is shared.
    other = bearer(api_key())
    assert _get(api_client, **other)[0].status_code == 200


def test_a_write_shows_at_the_next_request(
    api_client, api_key, on_redis, django_capture_on_commit_callbacks
):
    auth = bearer(api_key())
    before, _ = _get(api_client, **auth)
    assert _get(api_client, **auth)[1]
    with django_capture_on_commit_callbacks(execute=True):
        FileSystem.objects.filter(filesystem_id="fs-0").update(status="critical")
    after, fast = _get(api_client, **auth)
    assert not fast and after["ETag"] != before["ETag"]
    assert {row["filesystem_id"]: row["status"] for row in after.json()["results"]} == {
        "fs-0": "critical",
        "fs-1": "warning",
        "fs-2": "ok",
    }


def test_a_kept_validator_that_expired_sends_the_request_through_drf(api_client, api_key, on_redis):
    from apps.api.conditional import _validator_key

    auth = bearer(api_key())
    drf, _ = _get(api_client, **auth)
    assert _get(api_client, **auth)[1]
    on_redis.delete(_validator_key("efs_filesystem"))  # UNSEEN_WRITE_SECONDS later
    again, fast = _get(api_client, **auth)
    assert not fast
    _same(again, drf)
    assert _get(api_client, **auth)[1]  # the same validator, asked again: kept again


@pytest.mark.parametrize(
    "extra",
    [
        {"HTTP_COOKIE": "vigil_tz=Europe/Berlin"},  # a cookie: sessions and time zones apply
        {"HTTP_AUTHORIZATION": "Bearer"},  # malformed: DRF's 401
        {"HTTP_HOST": "elsewhere.example"},  # ALLOWED_HOSTS: the stack's 400
    ],
    ids=["cookie", "malformed", "host"],
)
def test_it_leaves_every_other_request_to_the_whole_stack(api_client, api_key, on_redis, extra):
    auth = bearer(api_key())
    _get(api_client, **auth)
    assert _get(api_client, **auth)[1]
    got, fast = _get(api_client, **{**auth, **extra})
    assert not fast
    fastpath.forget_all()
    drf, _ = _get(api_client, **{**auth, **extra})
    _same(got, drf)


def test_it_answers_head_through_drf(api_client, api_key, on_redis):
    auth = bearer(api_key())
    _get(api_client, **auth)
    before = fastpath.stats["answered"]
    assert api_client.head(URL, **auth).status_code == 200
    assert fastpath.stats["answered"] == before


def test_with_the_cache_down_requests_go_through_drf(api_client, api_key, on_redis, redis):
    auth = bearer(api_key())
    drf, _ = _get(api_client, **auth)
    assert _get(api_client, **auth)[1]
    redis.stop()
    got, fast = _get(api_client, **auth)
    assert not fast and got.status_code == 200
    assert got.content == drf.content


def test_after_a_write_it_answers_if_none_match_from_the_new_answers_only(
    api_client, api_key, on_redis, django_capture_on_commit_callbacks
):
    auth = bearer(api_key())
    old, _ = _get(api_client, **auth)
    _get(api_client, HTTP_IF_NONE_MATCH=old["ETag"], **auth)  # its 304 kept
    assert _get(api_client, HTTP_IF_NONE_MATCH=old["ETag"], **auth)[1]
    with django_capture_on_commit_callbacks(execute=True):
        FileSystem.objects.filter(filesystem_id="fs-1").update(status="ok")
    new, fast = _get(api_client, HTTP_IF_NONE_MATCH=old["ETag"], **auth)
    assert not fast and new.status_code == 200 and new["ETag"] != old["ETag"]
    drf_304, fast = _get(api_client, HTTP_IF_NONE_MATCH=new["ETag"], **auth)
    assert not fast and drf_304.status_code == 304
    again, fast = _get(api_client, HTTP_IF_NONE_MATCH=new["ETag"], **auth)
    assert fast and again.status_code == 304 and again["ETag"] == new["ETag"]
    stale, fast = _get(api_client, HTTP_IF_NONE_MATCH=old["ETag"], **auth)
    assert fast
    _same(stale, new)


def test_it_answers_gzip_to_a_client_that_accepts_it_compressed_once_as_drf_gave_it(
    api_client, api_key, on_redis
):
    auth = bearer(api_key())
    plain, _ = _get(api_client, **auth)
    gzip_auth = {**auth, "HTTP_ACCEPT_ENCODING": "gzip, deflate"}  # as requests sends
    drf, fast = _get(api_client, **gzip_auth)
    assert not fast and drf.status_code == 200
    assert drf["Content-Encoding"] == "gzip" and "Content-Encoding" not in plain
    assert gzip.decompress(drf.content) == plain.content
    assert int(drf["Content-Length"]) == len(drf.content) < len(plain.content)
    assert drf["ETag"] != plain["ETag"]  # one tag per coding
    for answer in (plain, drf):
        assert "Accept-Encoding" in answer["Vary"]
    again, fast = _get(api_client, **gzip_auth)
    assert fast
    _same(again, drf)
    identity, fast = _get(api_client, **auth)  # kept apart: the coding is part of the shape
    assert fast
    _same(identity, plain)
    # Whatever process compressed it, the bytes are the same (nothing kept here any more).
    fastpath.forget_all()
    conditional._bodies.clear()
    elsewhere, _ = _get(api_client, **gzip_auth)
    _same(elsewhere, drf)
    not_modified, _ = _get(api_client, HTTP_IF_NONE_MATCH=drf["ETag"], **gzip_auth)
    assert not_modified.status_code == 304


def test_a_client_that_refuses_gzip_gets_the_body_as_it_is(api_client, api_key, on_redis):
    auth = bearer(api_key())
    for value in ("gzip;q=0", "identity", "br", "*;q=0"):
        got = api_client.get(URL, HTTP_ACCEPT_ENCODING=value, **auth)
        assert got.status_code == 200 and "Content-Encoding" not in got
        got.json()

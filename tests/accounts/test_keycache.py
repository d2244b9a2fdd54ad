"""API keys with their owner and role kept in the cache a few seconds: a request reads no row to
know who calls, and revoking a key or changing its owner holds from the very next request."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.accounts import keycache
from apps.accounts.models import ApiKey
from apps.accounts.roles import ADMIN_GROUP, OPERATOR_GROUP
from tests.helpers import bearer

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def cached_keys(settings):
    settings.VIGIL_API_KEY_CACHE_SECONDS = 5
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "test-keycache",
        }
    }
    from django.core.cache import cache

    cache.clear()
    keycache._here.clear()  # what this process keeps in its memory
    yield
    keycache._here.clear()


def account_queries(api_client, key: str) -> tuple[int, list[str]]:
    with CaptureQueriesContext(connection) as queries:
        status = api_client.get("/api/regions/", **bearer(key)).status_code
    touched = [
        q["sql"]
        for q in queries.captured_queries
        if "accounts_apikey" in q["sql"] or "auth_user" in q["sql"] or "auth_group" in q["sql"]
    ]
    return status, touched


def test_a_second_request_reads_no_key_user_or_group_row(api_client, api_key):
    key = api_key()
    status, first = account_queries(api_client, key)
    assert status == 200 and first  # read once: the key, its owner, their groups
    status, second = account_queries(api_client, key)
    assert (status, second) == (200, [])


def test_a_revoked_key_stops_at_the_next_request(api_client, api_key):
    key = api_key(read_only=False)
    assert api_client.get("/api/regions/", **bearer(key)).status_code == 200  # cached now
    pk = ApiKey.objects.get().pk
    assert api_client.delete(f"/api/keys/{pk}/", **bearer(key)).status_code == 204
    refused = api_client.get("/api/regions/", **bearer(key))
    assert refused.status_code == 401
    assert refused.json() == {"error": "Invalid or revoked API key"}


def test_a_demoted_or_deactivated_owner_stops_at_the_next_request(api_client, api_key, user):
    key = api_key(read_only=False)
    made = api_client.post("/api/alerts/silences/", {"hours": 1}, format="json", **bearer(key))
    assert made.status_code == 201, made.content  # an admin: cached with that role
    user.groups.remove(Group.objects.get(name=ADMIN_GROUP))
    user.groups.add(Group.objects.get(name=OPERATOR_GROUP))
    listed = api_client.get("/api/audit/", **bearer(key))
    assert listed.status_code == 403 and "Your role (operator)" in listed.json()["error"]
    Group.objects.get(name=OPERATOR_GROUP).user_set.remove(user)  # from the group's side
    assert "Your role (viewer)" in api_client.get("/api/audit/", **bearer(key)).json()["error"]
    user.is_active = False
    user.save()
    assert api_client.get("/api/regions/", **bearer(key)).status_code == 401


def test_signing_in_does_not_forget_the_users_keys(api_client, api_key, user):
    from django.contrib.auth.models import update_last_login

    key = api_key()
    api_client.get("/api/regions/", **bearer(key))  # cached
    update_last_login(None, user)  # what every sign-in saves
    status, read = account_queries(api_client, key)
    assert (status, read) == (200, [])


@pytest.fixture(params=["locmem", "redis"])
def shared_cache(request, settings):
    """The cache the web processes share: Django's in-memory one, or a real Redis (our own
    redis-server, production's backend: the check rides in the rate limits' round trip)."""
    if request.param == "redis":
        server = request.getfixturevalue("redis")
        settings.CACHES = {
            "default": {
                "BACKEND": "apps.lib.cache.RedisCache",
                "LOCATION": server.url,
                "KEY_PREFIX": "test-keycache",
            }
        }
    from django.core.cache import cache

    return cache


def as_another_process_would(lookup: str, change) -> None:  # noqa: ANN001
    """``change`` made by another web process: its tombstone reaches the shared cache, and
    this process still keeps its copy of the key in memory."""
    kept = keycache._here[lookup]
    change()
    keycache._here[lookup] = kept


def test_a_key_kept_in_memory_is_refused_once_another_process_revokes_it(
    api_client, api_key, shared_cache
):
    key = api_key()
    assert api_client.get("/api/regions/", **bearer(key)).status_code == 200
    row = ApiKey.objects.get()
    assert row.lookup in keycache._here  # the next request would not ask the cache for it
    assert api_client.get("/api/regions/", **bearer(key)).status_code == 200
    as_another_process_would(row.lookup, row.revoke)
    refused = api_client.get("/api/regions/", **bearer(key))
    assert refused.status_code == 401
    assert refused.json() == {"error": "Invalid or revoked API key"}
    assert row.lookup not in keycache._here


def test_a_role_given_in_another_process_applies_at_the_next_request(
    api_client, api_key, user, shared_cache
):
    user.groups.remove(Group.objects.get(name=ADMIN_GROUP))
    key = api_key()
    assert api_client.get("/api/audit/", **bearer(key)).status_code == 403  # kept as a viewer
    lookup = ApiKey.objects.get().lookup
    as_another_process_would(lookup, lambda: user.groups.add(Group.objects.get(name=ADMIN_GROUP)))
    assert api_client.get("/api/audit/", **bearer(key)).status_code == 200


def test_a_kept_key_still_holding_is_served_from_memory(api_client, api_key, shared_cache):
    key = api_key()
    api_client.get("/api/regions/", **bearer(key))
    status, read = account_queries(api_client, key)
    assert (status, read) == (200, [])
    assert ApiKey.objects.get().lookup in keycache._here

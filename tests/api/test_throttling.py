"""API rate limits per key, counted in a real Redis (our own redis-server on a free port)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import time_machine

from tests.helpers import bearer

pytestmark = pytest.mark.django_db

# 10 s into a minute: the window has 50 s left, and the test cannot cross into the next one.
NOW = datetime(2026, 3, 2, 9, 30, 10, tzinfo=UTC)


@pytest.fixture
def limits(settings, redis):
    """Rates of 3 reads and 2 writes a minute, counted in that Redis (production's backend)."""
    settings.CACHES = {
        "default": {
            "BACKEND": "apps.lib.cache.RedisCache",  # as production has it
            "LOCATION": redis.url,
            "KEY_PREFIX": "test-throttling",
        }
    }
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"read": "3/min", "write": "2/min"},
    }
    with time_machine.travel(NOW, tick=False):
        yield


def test_it_answers_429_with_retry_after_and_a_json_error_over_the_read_rate(
    api_client, api_key, limits
):
    auth = bearer(api_key())
    answers = [api_client.get("/api/regions/", **auth).status_code for _ in range(4)]
    assert answers == [200, 200, 200, 429]
    refused = api_client.get("/api/regions/", **auth)
    assert refused["Retry-After"] == "50"
    assert refused.json() == {"error": "Request was throttled. Expected available in 50 seconds."}


def test_it_gives_each_key_its_own_budget(api_client, api_key, limits):
    first, second = bearer(api_key()), bearer(api_key())
    for _ in range(3):
        assert api_client.get("/api/regions/", **first).status_code == 200
    assert api_client.get("/api/regions/", **first).status_code == 429
    assert api_client.get("/api/regions/", **second).status_code == 200


def test_it_counts_writes_apart_from_reads(api_client, api_key, limits):
    auth = bearer(api_key(read_only=False))
    for _ in range(3):
        assert api_client.get("/api/keys/", **auth).status_code == 200
    assert api_client.get("/api/keys/", **auth).status_code == 429
    made = [
        api_client.post("/api/keys/", {"name": f"k{n}"}, format="json", **auth).status_code
        for n in range(3)
    ]
    assert made == [201, 201, 429]


def test_it_starts_a_new_budget_in_the_next_window(api_client, api_key, limits):
    auth = bearer(api_key())
    for _ in range(3):
        api_client.get("/api/regions/", **auth)
    assert api_client.get("/api/regions/", **auth).status_code == 429
    with time_machine.travel(NOW.replace(minute=31), tick=False):
        assert api_client.get("/api/regions/", **auth).status_code == 200


def test_it_lets_requests_through_while_the_cache_is_down(api_client, api_key, limits, redis):
    auth = bearer(api_key())
    redis.stop()
    assert [api_client.get("/api/regions/", **auth).status_code for _ in range(5)] == [200] * 5


def test_it_reads_its_rates_from_the_environment(monkeypatch):
    from django.core.exceptions import ImproperlyConfigured

    from apps.lib.conf import BY_NAME

    read = BY_NAME["VIGIL_API_RATE_READ"]
    assert read.read() == "1200/min"
    monkeypatch.setenv("VIGIL_API_RATE_READ", "50000/min")
    assert read.read() == "50000/min"
    monkeypatch.setenv("VIGIL_API_RATE_READ", "none")
    assert read.read() is None
    monkeypatch.setenv("VIGIL_API_RATE_READ", "lots")
    with pytest.raises(ImproperlyConfigured, match="VIGIL_API_RATE_READ"):
        read.read()


def test_it_counts_every_key_of_a_user_against_one_user_budget(api_client, api_key, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"read": "3/min", "user_read": "4/min"},
    }
    first, second = bearer(api_key()), bearer(api_key())
    with time_machine.travel(NOW, tick=False):
        answers = [api_client.get("/api/regions/", **first).status_code for _ in range(3)]
        answers += [api_client.get("/api/regions/", **second).status_code for _ in range(2)]
    assert answers == [200, 200, 200, 200, 429]


def test_it_counts_every_budget_of_a_request_in_one_round_trip(
    api_client, api_key, limits, redis, settings
):
    """A key's read budget and its owner's are counted in one script call, not one each."""
    import redis as redis_py

    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"read": "3/min", "user_read": "4/min"},
    }
    auth = bearer(api_key())
    client = redis_py.Redis.from_url(redis.url)
    client.config_resetstat()
    answers = [api_client.get("/api/regions/", **auth).status_code for _ in range(5)]
    assert answers == [200, 200, 200, 429, 429]
    stats = client.info("commandstats")
    calls = stats["cmdstat_evalsha"]
    # one round trip per request (the first also loads the script once)
    assert calls["calls"] - calls.get("failed_calls", 0) - calls.get("rejected_calls", 0) == 5
    assert "cmdstat_exec" not in stats and "cmdstat_multi" not in stats
    assert stats["cmdstat_set"]["calls"] == 10  # two budgets each (SET NX, then INCRBY)

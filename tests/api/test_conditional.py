"""Conditional GET: ETag and Last-Modified, 304s that cost less, and no stale answer after writes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.probes.models import Result, Target
from apps.regions.models import Region

pytestmark = pytest.mark.django_db


@pytest.fixture
def auth(api_key) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {api_key(read_only=False)}"}


@pytest.fixture
def target() -> Target:
    site = Region.objects.create(kind=Region.Kind.SITE, code="lab", name="Lab")
    return Target.objects.create(region=site, url="http://127.0.0.1:1/")


def _results(target: Target, n: int) -> None:
    earlier = timezone.now() - timedelta(hours=1)
    Result.objects.bulk_create(
        Result(target=target, started_at=earlier, created=earlier, cap_s=30, status="ok")
        for _ in range(n)
    )


def _of_results(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if '"probes_result"' in q["sql"]]


def test_it_answers_304_to_a_history_list_the_client_has_from_two_index_lookups(
    api_client, auth, target
):
    _results(target, 50)
    url = "/api/probes/results/?limit=50"
    with CaptureQueriesContext(connection) as full:
        first = api_client.get(url, **auth)
    assert first.status_code == 200 and len(first.json()["results"]) == 50
    assert first["ETag"] and first["Last-Modified"]
    assert "private" in first["Cache-Control"] and "no-cache" in first["Cache-Control"]

    with CaptureQueriesContext(connection) as conditional:
        again = api_client.get(url, HTTP_IF_NONE_MATCH=first["ETag"], **auth)
    assert again.status_code == 304 and again.content == b""
    assert again["ETag"] == first["ETag"]
    # Of the results table: the newest and the oldest row by the index, then the page; no
    # aggregate, no COUNT. A 304 reads the two rows only.
    assert len(_of_results(full)) == 3
    newest, oldest = _of_results(conditional)
    for lookup in (newest, oldest):
        assert "LIMIT 1" in lookup and "COUNT(" not in lookup and "MAX(" not in lookup

    dated = api_client.get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"], **auth)
    assert dated.status_code == 304


def test_it_changes_the_etag_when_a_row_is_added_or_pruned_or_the_query_differs(
    api_client, auth, target
):
    _results(target, 3)
    url = "/api/probes/results/"
    etag = api_client.get(url, **auth)["ETag"]
    assert api_client.get(f"{url}?limit=2", **auth)["ETag"] != etag

    Result.objects.create(target=target, started_at=timezone.now(), cap_s=30, status="critical")
    grown = api_client.get(url, HTTP_IF_NONE_MATCH=etag, **auth)
    assert grown.status_code == 200 and len(grown.json()["results"]) == 4

    Result.objects.filter(status="ok").last().delete()  # expiry takes the oldest rows
    pruned = api_client.get(url, HTTP_IF_NONE_MATCH=grown["ETag"], **auth)
    assert pruned.status_code == 200 and len(pruned.json()["results"]) == 3


def test_it_answers_304_for_an_unchanged_object_and_200_after_a_write(api_client, auth, target):
    url = f"/api/probes/targets/{target.pk}/"
    first = api_client.get(url, **auth)
    assert first.status_code == 200 and first["ETag"]
    assert api_client.get(url, HTTP_IF_NONE_MATCH=first["ETag"], **auth).status_code == 304

    patched = api_client.patch(url, {"enabled": False}, format="json", **auth)
    assert patched.status_code == 200 and patched.json()["enabled"] is False
    after = api_client.get(url, HTTP_IF_NONE_MATCH=first["ETag"], **auth)
    assert after.status_code == 200 and after.json()["enabled"] is False
    assert after["ETag"] != first["ETag"]


def test_it_sees_a_status_change_made_by_a_task_in_a_list(api_client, auth, target):
    url = "/api/probes/targets/"
    first = api_client.get(url, **auth)
    assert api_client.get(url, HTTP_IF_NONE_MATCH=first["ETag"], **auth).status_code == 304
    Target.objects.filter(pk=target.pk).update(status="critical")  # as alerts.record() does
    after = api_client.get(url, HTTP_IF_NONE_MATCH=first["ETag"], **auth)
    assert after.status_code == 200 and after.json()["results"][0]["status"] == "critical"

"""Every API list: filters (django-filter), ordering with a tie-breaker, pagination with a ceiling."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core import signing
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.api.lists import MAX_LIMIT
from apps.efs.models import FileSystem
from apps.galera.models import Cluster
from apps.probes.models import Result, Target
from apps.regions.models import Account, Region

pytestmark = pytest.mark.django_db


@pytest.fixture
def auth(api_key) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {api_key()}"}


@pytest.fixture
def regions() -> tuple[Region, Region]:
    account = Account.objects.create(name="prod")
    return (
        Region.objects.create(account=account, code="eu-west-1", name="Ireland"),
        Region.objects.create(kind=Region.Kind.SITE, code="lab", name="Lab"),
    )


def test_it_filters_by_region_id_or_code(api_client, auth, regions):
    ireland, lab = regions
    Cluster.objects.create(region=ireland, name="eu")
    Cluster.objects.create(region=lab, name="lab")
    for region in (str(lab.pk), "lab"):
        listed = api_client.get("/api/galera/clusters/", {"region": region}, **auth).json()
        assert [c["name"] for c in listed["results"]] == ["lab"]
    nowhere = api_client.get("/api/galera/clusters/?region=eu-west-9", **auth)
    assert nowhere.status_code == 400
    assert nowhere.json()["fields"]["region"] == [
        "no region or site 'eu-west-9': give an id or a code of /api/regions/"
    ]
    assert api_client.get("/api/galera/clusters/?region=999999", **auth).status_code == 400


def test_it_refuses_an_ordering_it_cannot_make_naming_those_it_can(api_client, auth):
    answer = api_client.get("/api/probes/targets/?ordering=nope", **auth)
    assert answer.status_code == 400
    (message,) = answer.json()["fields"]["ordering"]
    assert message.startswith("cannot order by 'nope': one of ")
    assert api_client.get("/api/probes/targets/?ordering=-name", **auth).status_code == 200


def test_it_refuses_a_concern_that_is_not_registered(api_client, auth):
    assert api_client.get("/api/alerts/transitions/?concern=probes", **auth).status_code == 200
    typed = api_client.get("/api/alerts/incidents/?concern=Keep-alive", **auth)
    assert typed.status_code == 400 and "concern" in typed.json()["fields"]


@pytest.mark.parametrize(
    "path", ["/api/regions/?region=eu-west-9", "/api/alerts/incidents/?ordering=-opened"]
)
def test_it_refuses_a_parameter_the_list_does_not_take(api_client, auth, path):
    answer = api_client.get(path, **auth)
    assert answer.status_code == 400
    ((name, (message,)),) = answer.json()["fields"].items()
    assert name in path and message.startswith("not a parameter of this list: it takes ")


def test_it_filters_file_systems_by_throughput_mode_and_hides_deleted_ones(
    api_client, auth, regions
):
    ireland, _ = regions
    FileSystem.objects.create(region=ireland, filesystem_id="fs-1", throughput_mode="elastic")
    FileSystem.objects.create(region=ireland, filesystem_id="fs-2")
    FileSystem.objects.create(region=ireland, filesystem_id="fs-3", deleted=timezone.now())

    def ids(**params: str) -> list[str]:
        body = api_client.get("/api/efs/filesystems/", params, **auth).json()
        return sorted(f["filesystem_id"] for f in body["results"])

    assert ids() == ["fs-1", "fs-2"]
    assert ids(throughput_mode="elastic") == ["fs-1"]
    assert ids(deleted="true") == ["fs-1", "fs-2", "fs-3"]
    assert ids(region="eu-west-1", throughput_mode="bursting") == ["fs-2"]


def test_it_selects_history_by_time_range(api_client, auth, regions):
    _, lab = regions
    target = Target.objects.create(region=lab, url="http://127.0.0.1:1/")
    now = timezone.now()
    for hours in (30, 20, 10):
        at = now - timedelta(hours=hours)
        Result.objects.create(target=target, started_at=at, created=at, cap_s=30, status="ok")
    since, until = (now - timedelta(hours=25)).isoformat(), (now - timedelta(hours=15)).isoformat()
    body = api_client.get("/api/probes/results/", {"since": since, "until": until}, **auth).json()
    assert len(body["results"]) == 1
    assert body["results"][0]["created"].startswith((now - timedelta(hours=20)).date().isoformat())


def test_it_refuses_an_invalid_filter_value_with_a_json_400(api_client, auth):
    response = api_client.get("/api/probes/targets/?status=purple", **auth)
    assert response.status_code == 400
    assert response.json()["error"] == "Invalid input"
    assert "status" in response.json()["fields"]
    assert api_client.get("/api/probes/results/?since=yesterday", **auth).status_code == 400


def test_it_pages_deterministically_when_the_ordered_column_ties(api_client, auth, regions):
    _, lab = regions
    made = [Target.objects.create(region=lab, url=f"http://127.0.0.1:{n}/") for n in range(1, 8)]
    seen = []
    for offset in range(0, 7, 2):
        page = api_client.get(
            "/api/probes/targets/", {"ordering": "status", "limit": 2, "offset": offset}, **auth
        ).json()
        seen += [t["id"] for t in page["results"]]
    assert seen == [t.pk for t in made]  # all 'unknown': the id breaks the tie
    newest_first = api_client.get("/api/probes/targets/?ordering=-status", **auth).json()
    assert [t["id"] for t in newest_first["results"]] == [t.pk for t in reversed(made)]


def test_it_caps_the_page_size(api_client, auth, regions):
    _, lab = regions
    target = Target.objects.create(region=lab, url="http://127.0.0.1:1/")
    at = timezone.now()
    Result.objects.bulk_create(
        Result(target=target, started_at=at, cap_s=30, status="ok") for _ in range(MAX_LIMIT + 5)
    )
    body = api_client.get(f"/api/probes/results/?limit={MAX_LIMIT * 10}", **auth).json()
    assert len(body["results"]) == MAX_LIMIT and body["next"]
    assert len(api_client.get("/api/probes/results/", **auth).json()["results"]) == 100


def test_it_documents_filters_ordering_and_pagination_in_the_schema(api_schema):
    schema = api_schema
    params = {p["name"] for p in schema["paths"]["/api/probes/results/"]["get"]["parameters"]}
    assert {"target", "region", "status", "since", "until", "cursor", "limit"} <= params
    assert "ordering" not in params and "offset" not in params
    params = {p["name"] for p in schema["paths"]["/api/probes/targets/"]["get"]["parameters"]}
    assert {"ordering", "limit", "offset"} <= params
    errors = schema["paths"]["/api/probes/targets/{id}/"]["patch"]["responses"]
    assert {"400", "401", "403", "404", "429"} <= set(errors)
    assert errors["429"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Error"
    }


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ("account=-58149273570870118530605719224320", 400),
        ("account=1e40", 400),
        ("region=99999999999999999999999", 400),
    ],
)
def test_it_answers_an_id_beyond_any_column_without_failing(api_client, auth, query, status):
    response = api_client.get(f"/api/efs/filesystems/?{query}", **auth)
    assert response.status_code == status
    if status == 200:
        assert response.json()["count"] == 0


@pytest.mark.parametrize(
    "query",
    ["since=0252-09-21T12:49:04-22:16", "until=9746-10-06T13:28:06.14680-20:52"],
)
def test_it_takes_a_time_with_any_offset_python_accepts(api_client, auth, query):
    # PostgreSQL refuses offsets past ±15:59: the filter hands it the instant in UTC.
    response = api_client.get(f"/api/probes/results/?{query.replace('+', '%2B')}", **auth)
    assert response.status_code == 200


def test_it_refuses_a_time_that_does_not_exist_in_utc(api_client, auth):
    response = api_client.get("/api/probes/results/?since=0001-01-01T00:00:00%2B23:00", **auth)
    assert response.status_code == 400
    assert response.json()["fields"] == {"since": "out of range"}


def _results_over_time(regions, n: int) -> Target:
    _, lab = regions
    target = Target.objects.create(region=lab, url="http://127.0.0.1:1/")
    at = timezone.now()
    Result.objects.bulk_create(
        # Pairs that share a time: the key's tie-breaker (the id) must keep them apart.
        Result(target=target, started_at=at, created=at - timedelta(seconds=i // 2), cap_s=30)
        for i in range(n)
    )
    return target


def test_it_walks_a_history_list_by_cursor_without_repeating_or_skipping_a_row(
    api_client, auth, regions
):
    _results_over_time(regions, 25)
    seen, url = [], "/api/probes/results/?limit=4"
    with CaptureQueriesContext(connection) as queries:
        while url:
            body = api_client.get(url, **auth).json()
            assert set(body) == {"next", "results"}  # no count: nothing scans the table
            seen += [(row["created"], row["id"]) for row in body["results"]]
            url = body["next"]
    assert len(seen) == 25 == len(set(seen))
    assert seen == sorted(seen, reverse=True)
    assert not any("COUNT(" in q["sql"] for q in queries.captured_queries)


@pytest.mark.parametrize("cursor", ["garbage", "", "WzEsMl0:forged:signature", "W10"])
def test_it_refuses_a_cursor_it_did_not_give_with_a_400(api_client, auth, regions, cursor):
    _results_over_time(regions, 3)
    response = api_client.get("/api/probes/results/", {"cursor": cursor}, **auth)
    assert response.status_code == 400
    assert "cursor" in response.json()["fields"]


def test_it_refuses_a_cursor_whose_position_was_edited(api_client, auth, regions):
    _results_over_time(regions, 3)
    link = api_client.get("/api/probes/results/?limit=1", **auth).json()["next"]
    [token] = parse_qs(urlsplit(link).query)["cursor"]
    value, signature = token.split(":", 1)
    forged = signing.b64_encode(b'["2000-01-01T00:00:00+00:00",1]').decode()
    response = api_client.get("/api/probes/results/", {"cursor": f"{forged}:{signature}"}, **auth)
    assert response.status_code == 400
    assert value != forged


@pytest.mark.parametrize("limit", ["0", "-1", "ten", "1e3"])
def test_it_refuses_a_history_page_size_that_is_not_a_whole_number(
    api_client, auth, regions, limit
):
    response = api_client.get("/api/probes/results/", {"limit": limit}, **auth)
    assert response.status_code == 400

"""Every API list: filters (django-filter), ordering with a tie-breaker, pagination with a ceiling."""

from __future__ import annotations

from datetime import timedelta

import pytest
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
    assert api_client.get("/api/galera/clusters/?region=nowhere", **auth).json()["count"] == 0


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
    assert body["count"] == 1
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


def test_it_documents_filters_ordering_and_pagination_in_the_schema(api_client, auth):
    schema = api_client.get("/api/schema/?format=json", **auth).json()
    params = {p["name"] for p in schema["paths"]["/api/probes/results/"]["get"]["parameters"]}
    assert {"target", "region", "status", "since", "until", "ordering", "limit"} <= params
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
        ("region=99999999999999999999999", 200),
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

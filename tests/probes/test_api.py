"""Probe targets (CRUD with a read-write key) and results (read, filtered) through the API."""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps.probes.models import Result, Target
from apps.regions.models import Region
from tests.helpers import bearer

pytestmark = pytest.mark.django_db


def test_it_creates_reads_updates_and_deletes_a_target_with_a_read_write_key(writer, site):
    created = writer.post(
        "/api/probes/targets/",
        {
            "url": "https://127.0.0.1:8443/",
            "region": site.pk,
            "expected_min_s": 60,
            "expected_max_s": 75,
            "cap_s": 120,
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["status"] == "unknown"
    assert body["enabled"] is True and body["verify_tls"] is True

    pk = body["id"]
    patched = writer.patch(
        f"/api/probes/targets/{pk}/", {"enabled": False, "status": "ok"}, format="json"
    )
    assert patched.status_code == 200
    assert patched.json()["enabled"] is False
    assert patched.json()["status"] == "unknown"  # status is read-only: only probes set it

    listed = writer.get(f"/api/probes/targets/?region={site.pk}").json()
    assert [t["id"] for t in listed["results"]] == [pk]

    assert writer.delete(f"/api/probes/targets/{pk}/").status_code == 204
    assert not Target.objects.exists()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"url": "ftp://127.0.0.1/"}, "url"),
        ({"url": "http://127.0.0.1/", "expected_min_s": 60}, "both ends"),
        ({"url": "http://127.0.0.1/", "expected_min_s": 75, "expected_max_s": 60}, "before it"),
        ({"url": "http://127.0.0.1/", "cap_s": 7200}, "cap_s"),
    ],
)
def test_it_refuses_an_invalid_target(api_client, api_key, site, fields, message):
    response = api_client.post(
        "/api/probes/targets/",
        {"region": site.pk, **fields},
        format="json",
        **bearer(api_key(read_only=False)),
    )
    assert response.status_code == 400
    assert message in str(response.json())


def test_it_refuses_target_writes_with_a_read_only_key(api_client, api_key, site):
    response = api_client.post(
        "/api/probes/targets/",
        {"url": "http://127.0.0.1/", "region": site.pk},
        format="json",
        **bearer(api_key(read_only=True)),
    )
    assert response.status_code == 403
    assert response.json() == {"error": "This API key is read-only"}


def test_it_lists_results_filtered_by_target_and_region_and_allows_no_writes(
    api_client, api_key, site
):
    other = Region.objects.create(kind=Region.Kind.SITE, code="dc2", name="DC 2")
    a = Target.objects.create(region=site, url="http://127.0.0.1:1/")
    b = Target.objects.create(region=other, url="http://127.0.0.1:2/")
    now = timezone.now()
    mine = Result.objects.create(
        target=a, started_at=now, cap_s=30, idle_timeout_s=3.0, closed_by="server", status="ok"
    )
    Result.objects.create(target=b, started_at=now, cap_s=30, error="refused", status="critical")
    auth = bearer(api_key(read_only=True))

    by_target = api_client.get(f"/api/probes/results/?target={a.pk}", **auth).json()
    by_region = api_client.get(f"/api/probes/results/?region={site.pk}", **auth).json()
    everything = api_client.get("/api/probes/results/", **auth).json()

    assert [r["id"] for r in by_target["results"]] == [mine.pk]
    assert [r["id"] for r in by_region["results"]] == [mine.pk]
    assert by_target["results"][0]["idle_timeout_s"] == 3.0
    assert len(everything["results"]) == 2 and everything["next"] is None
    write = api_client.post("/api/probes/results/", {}, format="json", **bearer(api_key(False)))
    assert write.status_code == 405


def test_it_documents_the_probe_endpoints_in_the_schema(api_schema):
    assert "/api/probes/targets/" in api_schema["paths"]
    assert "/api/probes/results/" in api_schema["paths"]

"""The EFS API's series: any time Python reads is answered, never with a server error."""

from __future__ import annotations

import pytest

from apps.efs.models import FileSystem
from apps.regions.models import Account, Region

pytestmark = pytest.mark.django_db


@pytest.fixture
def url() -> str:
    region = Region.objects.create(account=Account.objects.create(name="prod"), code="eu-west-1")
    fs = FileSystem.objects.create(region=region, filesystem_id="fs-0123abcd")
    return f"/api/efs/filesystems/{fs.pk}/series/"


@pytest.fixture
def auth(api_key) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {api_key()}"}


def test_it_reads_a_range_given_with_any_utc_offset(api_client, auth, url):
    # PostgreSQL refuses offsets past ±15:59; the range is handed to it in UTC.
    got = api_client.get(
        url, {"start": "2026-03-01T23:00:00-20:00", "end": "2026-03-02T21:00:00-20:00"}, **auth
    )
    assert got.status_code == 200, got.json()
    assert got.json()["resolution"] == "hour"


@pytest.mark.parametrize("start", ["2026-13-01T00:00:00Z", "0001-01-01T00:00:00+23:00"])
def test_it_refuses_a_time_that_does_not_exist_with_a_400(api_client, auth, url, start):
    got = api_client.get(url, {"start": start, "end": "2026-03-02T00:00:00Z"}, **auth)
    assert got.status_code == 400
    assert got.json()["error"] == "Invalid input" and "start" in got.json()["fields"]


def test_it_serves_the_series_with_a_format_suffix(api_client, auth, url):
    # The router also routes /series.json/; the action must take the format it passes.
    got = api_client.get(url.replace("/series/", "/series.json/"), **auth)
    assert got.status_code == 200 and got.json()["resolution"] == "minute"

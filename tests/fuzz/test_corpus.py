"""Every hostile case of ``tests/fixtures/hostile`` ends as its README says: a result or a
clear error, and nothing else (no other exception, no 500, no value the database refuses).
Pushes, threshold bodies and cron fields also go through the API, on this test's database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import Client

from apps.alerts.models import MaintenanceWindow
from apps.probes.models import Target
from apps.raid.models import Host
from apps.regions.models import Region, Threshold
from tests.fuzz import targets

pytestmark = pytest.mark.fuzz

EXPECTED = targets.expectations()
PARSED = [p for p in targets.corpus() if p.name.split("--")[0] in targets.TARGETS]
PUSHED = targets.corpus("push")
THRESHOLDS = targets.corpus("thresholds")
CRONS = targets.corpus("cron")


def test_the_readme_lists_every_case_and_nothing_else():
    assert sorted(EXPECTED) == sorted(p.name for p in targets.corpus())


def test_every_case_has_a_reader():
    kinds = {p.name.split("--")[0] for p in targets.corpus()}
    assert kinds == {*targets.TARGETS, "push", "thresholds"}


@pytest.mark.parametrize("case", PARSED, ids=lambda p: p.name)
def test_every_case_ends_in_the_result_or_error_the_readme_says(case: Path):
    kind = case.name.split("--")[0]
    outcome = targets.TARGETS[kind](case.read_bytes())
    assert str(outcome).startswith(EXPECTED[case.name])


def push(host: Host, body: bytes, content_type: str) -> str:
    """``POST`` a report through the whole Django stack; the status and error, as the README."""
    response = Client().generic(
        "POST",
        f"/api/raid/hosts/{host.pk}/report",
        body,
        content_type=content_type,
        HTTP_AUTHORIZATION=f"Bearer {host.issue_token()}",
    )
    assert response.status_code < 500
    data = response.json()
    return f"{response.status_code}: {data['error']}" if "error" in data else "200"


@pytest.fixture
def host(db) -> Host:
    site = Region.objects.create(code="hostile", name="Hostile", kind=Region.Kind.SITE)
    return Host.objects.create(name="hostile", region=site)


@pytest.mark.parametrize("case", PUSHED, ids=lambda p: p.name)
def test_every_push_is_answered_as_the_readme_says_on_this_database(host, case: Path):
    content_type = "application/json" if case.suffix == ".json" else "text/plain"
    assert push(host, case.read_bytes(), content_type).startswith(EXPECTED[case.name])


def answer(response) -> str:
    """An API answer as the README writes it: ``200``, or the status and the error (a field's
    first message where the body was read but refused)."""
    assert response.status_code < 500
    if response.status_code < 300:
        return str(response.status_code)
    data = response.json()
    fields = data.get("fields") or {}
    first = next(iter(fields.values()), None)
    words = (first[0] if isinstance(first, list) else first) if fields else data["error"]
    return f"{response.status_code}: {words}"


@pytest.mark.parametrize("case", THRESHOLDS, ids=lambda p: p.name)
def test_every_threshold_body_is_answered_as_the_readme_says_for_a_subject_and_a_region(
    writer, site, case: Path
):
    target = Target.objects.create(region=site, url="http://127.0.0.1:1/")
    Threshold.objects.create(concern="probes", region=site, name="tolerance_s", value=5)
    before = sorted(Threshold.objects.values_list("subject_id", "name", "value"))
    body = case.read_bytes()
    for url in (
        f"/api/probes/targets/{target.pk}/thresholds/",
        f"/api/regions/{site.pk}/thresholds/probes/",
    ):
        got = answer(writer.generic("PUT", url, body, content_type="application/json"))
        assert got.startswith(EXPECTED[case.name]), (url, got)
        if got != "200":  # a refused body changes nothing
            assert sorted(Threshold.objects.values_list("subject_id", "name", "value")) == before


@pytest.mark.parametrize("case", CRONS, ids=lambda p: p.name)
def test_every_cron_field_is_saved_or_refused_through_the_api_as_its_reading_says(
    writer, site, case: Path
):
    """The field as an admin sends it in JSON (undecodable bytes as the escapes a client would
    send): saved when the reading found a rule and it fits the column, else a 400."""
    text = targets.decoded(case.read_bytes())
    body = {"name": case.name[:100], "region": site.pk, "cron": text, "minutes": 120}
    body |= {"time_zone": "Europe/Berlin", "days": []}
    sent = json.dumps(body)  # ASCII: a lone surrogate escaped, as a client sends it
    response = writer.generic("POST", "/api/alerts/maintenance-windows/", sent, "application/json")
    got = answer(response)
    fits = len(text) <= MaintenanceWindow._meta.get_field("cron").max_length
    if EXPECTED[case.name].startswith("result") and fits:
        assert got == "201", got
        assert MaintenanceWindow.objects.get().cron == " ".join(text.split())
    else:
        assert got.startswith("400"), got
        assert not MaintenanceWindow.objects.exists()

"""Every hostile case of ``tests/fixtures/hostile`` ends as its README says: a result or a
clear error, and nothing else (no other exception, no 500, no value the database refuses)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

from apps.raid.models import Host
from tests.fuzz import targets

pytestmark = pytest.mark.fuzz

EXPECTED = targets.expectations()
PARSED = [p for p in targets.corpus() if not p.name.startswith("push--")]
PUSHED = targets.corpus("push")


def test_the_readme_lists_every_case_and_nothing_else():
    assert sorted(EXPECTED) == sorted(p.name for p in targets.corpus())


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
    from apps.regions.models import Region

    site = Region.objects.create(code="hostile", name="Hostile", kind=Region.Kind.SITE)
    return Host.objects.create(name="hostile", region=site)


@pytest.mark.parametrize("case", PUSHED, ids=lambda p: p.name)
def test_every_push_is_answered_as_the_readme_says_on_this_database(host, case: Path):
    content_type = "application/json" if case.suffix == ".json" else "text/plain"
    assert push(host, case.read_bytes(), content_type).startswith(EXPECTED[case.name])

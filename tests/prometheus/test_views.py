"""/metrics: who may read it, that Prometheus' own parser reads it, and what it costs."""

from __future__ import annotations

import gzip

import pytest
from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from apps.efs.models import FileSystem
from apps.prometheus.collector import FixedFamilies, registry, render, text_format
from apps.regions import concerns
from apps.regions.models import Account, Region

from .fleet import build_fleet

pytestmark = pytest.mark.django_db


def samples(response) -> dict[str, list]:
    """``{metric name: [Sample, ...]}`` as prometheus-client's text parser reads the body."""
    text = response.content.decode()
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


@pytest.fixture
def filesystem() -> FileSystem:
    region = Region.objects.create(account=Account.objects.create(name="prod"), code="eu-west-1")
    return FileSystem.objects.create(
        region=region, filesystem_id="fs-1", status="warning", figures={"io_limit_pct": 91.5}
    )


def test_it_refuses_a_client_without_a_key_from_an_address_not_allowed(client, filesystem):
    response = client.get("/metrics")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert "API key" in response.json()["error"]
    assert b"fs-1" not in response.content


def test_it_refuses_an_invalid_or_revoked_key(client, api_key, filesystem):
    from apps.accounts.models import ApiKey

    raw = api_key()
    ApiKey.objects.get().revoke()
    for key in (raw, "vgr_nonsense12345678"):
        response = client.get("/metrics", headers={"Authorization": f"Bearer {key}"})
        assert response.status_code == 401
        assert response.json() == {"error": "Invalid or revoked API key"}


def test_it_answers_a_read_only_api_key(client, api_key, filesystem):
    response = client.get("/metrics", headers={"Authorization": f"Bearer {api_key()}"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    assert "no-store" in response["Cache-Control"]
    io = samples(response)["vigil_efs_io_limit_percent"]
    assert [(s.labels["filesystem_id"], s.value) for s in io] == [("fs-1", 91.5)]


def test_it_answers_an_address_in_the_allow_list_without_a_key(client, settings, filesystem):
    settings.VIGIL_METRICS_ALLOW = ["10.0.0.0/8", "192.0.2.7"]
    assert client.get("/metrics", REMOTE_ADDR="10.20.30.40").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="::ffff:192.0.2.7").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="192.0.2.8").status_code == 401
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 401


def test_it_checks_the_client_behind_a_proxy_not_the_proxy(client, settings, filesystem):
    settings.VIGIL_METRICS_ALLOW = ["127.0.0.1"]
    settings.VIGIL_PROXY_COUNT = 1
    through_proxy = {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "203.0.113.9"}
    assert client.get("/metrics", **through_proxy).status_code == 401
    settings.VIGIL_METRICS_ALLOW = ["203.0.113.0/24"]
    assert client.get("/metrics", **through_proxy).status_code == 200


def test_it_needs_no_login_session_but_still_a_key(client, user, filesystem):
    client.force_login(user)  # a session is not a scrape credential
    assert client.get("/metrics").status_code == 401


def test_it_is_read_only(client, api_key):
    response = client.post("/metrics", headers={"Authorization": f"Bearer {api_key()}"})
    assert response.status_code == 405


def test_it_speaks_openmetrics_and_gzip_when_asked(client, api_key, filesystem):
    response = client.get(
        "/metrics",
        headers={
            "Authorization": f"Bearer {api_key()}",
            "Accept": "application/openmetrics-text; version=1.0.0",
            "Accept-Encoding": "gzip",
        },
    )
    assert response["Content-Type"].startswith("application/openmetrics-text")
    assert response["Content-Encoding"] == "gzip"
    assert gzip.decompress(response.content).decode().endswith("# EOF\n")


def test_it_is_not_in_the_api_schema(api_schema):
    assert "/api/probes/targets/" in api_schema["paths"]
    assert not [path for path in api_schema["paths"] if "/metrics" in path]


def test_it_reads_the_fleet_in_a_constant_number_of_queries(
    client, settings, django_assert_num_queries
):
    settings.VIGIL_METRICS_ALLOW = ["127.0.0.1"]
    build_fleet(3, prefix="small")
    # One query per concern, two for the probes (targets, then their latest results), for
    # md-RAID (arrays, then the disks under them) and for EFS (file systems, then the counts of
    # their NFS clients); four for the alerts (causes, escalations, maintenance windows,
    # subjects held by a declared dependency).
    expected = 4 + sum(
        1 + (c.key in ("probes", "raid", "efs")) for c in concerns.registered() if c.prometheus
    )
    with django_assert_num_queries(expected):
        small = samples(client.get("/metrics"))
    build_fleet(60, regions=5, prefix="big")
    with django_assert_num_queries(expected):
        big = samples(client.get("/metrics"))
    assert len(small["vigil_subject_status"]) == 4 * 4 * 3
    assert len(big["vigil_subject_status"]) == 4 * 4 * 63
    assert len(big["vigil_probe_keepalive_idle_timeout_seconds"]) == 63


def test_its_own_text_encoder_writes_what_prometheus_client_writes(db):
    build_fleet(3)
    FileSystem.objects.filter(pk=FileSystem.objects.first().pk).update(name='quote " back \\ nl\n')
    families = list(registry.collect())
    assert text_format(families) == generate_latest(FixedFamilies(families))


def test_it_renders_the_body_once_per_cache_interval(db, settings):
    build_fleet(2)
    settings.VIGIL_METRICS_CACHE_SECONDS = 15
    first, _ = render()
    FileSystem.objects.update(status="critical")
    assert render()[0] == first  # the same scrape interval: the kept body
    settings.VIGIL_METRICS_CACHE_SECONDS = 0
    assert render()[0] != first

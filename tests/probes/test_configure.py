"""Probe targets added in the app by an operator, measured once before saving."""

from __future__ import annotations

import pytest

from apps.probes.demo import Behaviour, DemoServers
from apps.probes.models import Target

pytestmark = pytest.mark.django_db


def form(site, url: str, **over: object) -> dict[str, object]:
    return {
        "name": "front end",
        "url": url,
        "region": site.pk,
        "expected_min_s": 4,
        "expected_max_s": 6,
        "interval_s": 300,
        "cap_s": 120,
        "timeout_s": 5,
        "verify_tls": "on",
        "enabled": "on",
        **over,
    }


def test_an_operator_measures_once_then_saves(client, operator, site, settings):
    settings.VIGIL_OUTBOUND_ALLOW_LOOPBACK = "true"
    client.force_login(operator)
    with DemoServers((Behaviour("quick", 1.0, (4, 6)),)) as urls:
        page = client.post("/probes/targets/new/", {**form(site, urls[0]), "_try": "1"})
    html = page.content.decode()
    assert page.status_code == 200 and "Measured once" in html
    assert "closes idle connections after 1.0 s, expected 4-6 s" in html
    assert not Target.objects.exists()
    saved = client.post("/probes/targets/new/", form(site, "http://127.0.0.1:9/"))
    target = Target.objects.get()
    assert saved["Location"] == f"/probes/targets/{target.pk}/"


def test_the_metadata_service_is_refused_when_measured(client, operator, site):
    client.force_login(operator)
    page = client.post(
        "/probes/targets/new/", {**form(site, "http://169.254.169.254/"), "_try": "1"}
    )
    html = page.content.decode()
    assert "169.254.169.254 is refused: the instance metadata service" in html
    assert not Target.objects.exists()


@pytest.mark.parametrize(
    ("over", "said"),
    [
        ({"expected_min_s": 75, "expected_max_s": 60}, "The expected range ends (60 s) before"),
        ({"expected_max_s": ""}, "Give both ends of the expected keep-alive range, or neither."),
    ],
)
def test_a_wrong_range_is_said_in_the_form_s_words(client, operator, site, over, said):
    client.force_login(operator)
    page = client.post("/probes/targets/new/", form(site, "http://127.0.0.1:9/", **over))
    html = page.content.decode()
    assert page.status_code == 400 and said in html
    assert "Constraint" not in html and "probe_expected_range" not in html
    assert not Target.objects.exists()


def test_a_viewer_may_not_add_a_target(client, viewer, site):
    client.force_login(viewer)
    refused = client.post("/probes/targets/new/", form(site, "http://x/"))
    assert refused.status_code == 403
    html = refused.content.decode()
    # In the app's page, with its navigation and the reason.
    assert '<nav aria-label="Main">' in html
    assert "Your role (viewer) may not do this: it needs probes.add_target." in html

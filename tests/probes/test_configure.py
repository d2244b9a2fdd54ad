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
    with DemoServers((Behaviour("quick", 0.5, (4, 6)),)) as urls:
        page = client.post("/probes/targets/new/", {**form(site, urls[0]), "_try": "1"})
    html = page.content.decode()
    assert page.status_code == 200 and "Measured once" in html
    assert "closes idle connections after 0.5 s, expected 4-6 s" in html
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


class HeldServer:
    """An HTTP server on 127.0.0.1 that accepts, says so (``accepted``), and answers only once
    the test lets it (``release``): a "Measure once" against it runs until then."""

    def __init__(self) -> None:
        import socket
        import threading

        self.listener = socket.create_server(("127.0.0.1", 0))
        self.accepted = threading.Event()
        self.release = threading.Event()
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(4096)
                self.accepted.set()
                self.release.wait(30)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    def close(self) -> None:
        self.release.set()
        self.listener.close()


@pytest.mark.django_db(transaction=True)
def test_measure_once_runs_one_per_user_and_a_few_for_everyone(
    site, operator, settings, django_user_model
):
    import threading

    from django.test import Client

    from tests.helpers import make_user

    settings.VIGIL_OUTBOUND_ALLOW_LOOPBACK = "true"
    settings.VIGIL_TRIALS_AT_ONCE = 1
    held = HeldServer()
    first = Client()
    first.force_login(operator)
    answers: list[int] = []

    def measure() -> None:
        from django.db import connection

        try:
            page = first.post("/probes/targets/new/", {**form(site, held.url), "_try": "1"})
            answers.append(page.status_code)
        finally:
            connection.close()

    running = threading.Thread(target=measure)
    running.start()
    try:
        assert held.accepted.wait(10)  # the first measurement holds its slots now
        again = first.post("/probes/targets/new/", {**form(site, held.url), "_try": "1"})
        other = Client()
        other.force_login(make_user(django_user_model, "operator2", "operator"))
        someone = other.post("/probes/targets/new/", {**form(site, held.url), "_try": "1"})
    finally:
        held.release.set()
        running.join(30)
        held.close()

    assert (again.status_code, again["Retry-After"]) == (429, "5")
    assert "Your previous measurement is still running" in again.content.decode()
    assert someone.status_code == 429
    assert "1 measurements are running for other people (VIGIL_TRIALS_AT_ONCE)" in (
        someone.content.decode()
    )
    assert answers == [200]  # the first one ran to its end
    assert not Target.objects.exists()  # nothing saved by any of them
    # the slots are given back: the other operator measures now
    with DemoServers((Behaviour("quick", 0.5, (4, 6)),)) as urls:
        now = other.post("/probes/targets/new/", {**form(site, urls[0]), "_try": "1"})
    assert now.status_code == 200 and "Measured once" in now.content.decode()

"""The keep-alive measurement against a real nginx and against misbehaving servers."""

from __future__ import annotations

import asyncio
import ssl
import time
from datetime import UTC, datetime, timedelta

import pytest

from apps.probes.keepalive import Measurement, ProbeSpec, measure, measure_many
from tests.probes import edge_servers
from tests.probes.nginx import KEEPALIVE_TIMEOUTS, Nginx, free_port

# nginx closes idle connections from a timer; the measurement sees it within this much.
TOLERANCE_S = 0.5
CONFIGURED_S = {"0": 0.0, "1s": 1.0, "3s": 3.0, "7s": 7.0, "5s 3": 5.0}
CASES = [(timeout, tls) for timeout in KEEPALIVE_TIMEOUTS for tls in (False, True)]


@pytest.fixture(scope="module")
def nginx_measurements(nginx: Nginx) -> dict[tuple[str, bool], Measurement]:
    """Every nginx server block measured at once (the slowest closes after 7 s)."""

    async def run_all() -> list[Measurement]:
        return await asyncio.gather(
            *(
                measure(nginx.url(nginx.site(t, tls)), verify_tls=False, cap_s=30)
                for t, tls in CASES
            )
        )

    return dict(zip(CASES, asyncio.run(run_all()), strict=True))


def probe(url: str, **options) -> Measurement:
    return asyncio.run(measure(url, **options))


async def probe_edge(behaviour: edge_servers.Behaviour, **options) -> Measurement:
    async with edge_servers.serve(behaviour) as port:
        return await measure(f"http://127.0.0.1:{port}/", **options)


def edge(behaviour: edge_servers.Behaviour, **options) -> Measurement:
    return asyncio.run(probe_edge(behaviour, **options))


@pytest.mark.parametrize(
    ("timeout", "tls"), CASES, ids=[f"{t}-{'https' if s else 'http'}" for t, s in CASES]
)
def test_it_measures_the_idle_timeout_nginx_was_configured_with(nginx_measurements, timeout, tls):
    measurement = nginx_measurements[(timeout, tls)]

    assert measurement.error is None
    assert measurement.status_code == 200
    assert measurement.closed_by == "server"
    assert measurement.closed_with == "fin"
    assert measurement.idle_timeout_s == pytest.approx(CONFIGURED_S[timeout], abs=TOLERANCE_S)


@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
def test_it_sees_keepalive_timeout_0_as_a_close_right_after_the_response(nginx_measurements, tls):
    measurement = nginx_measurements[("0", tls)]

    assert measurement.closed_right_after_response
    assert measurement.connection_close_announced


@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
def test_it_reports_that_nginx_advertised_3_s_but_kept_the_connection_5_s(nginx_measurements, tls):
    measurement = nginx_measurements[("5s 3", tls)]

    assert measurement.advertised_timeout_s == 3.0
    assert measurement.advertised_timeout_matched is False
    assert not measurement.closed_right_after_response


def test_it_records_no_advertised_timeout_when_nginx_sends_no_keep_alive_header(
    nginx_measurements,
):
    measurement = nginx_measurements[("3s", False)]

    assert measurement.advertised_timeout_s is None
    assert measurement.advertised_timeout_matched is None
    assert not measurement.connection_close_announced


def test_it_times_each_phase_and_reads_the_certificate_expiry_without_verifying(
    nginx_measurements,
):
    measurement = nginx_measurements[("1s", True)]
    days_left = measurement.tls_expires - datetime.now(UTC)

    assert measurement.peer_address == "127.0.0.1"
    assert timedelta(days=29) < days_left <= timedelta(days=30)
    for phase in ("dns_s", "connect_s", "tls_s", "first_byte_s", "total_s"):
        assert getattr(measurement, phase) >= 0
    assert measurement.total_s >= measurement.tls_s


def test_it_reports_an_untrusted_certificate_as_a_tls_failure(nginx):
    measurement = probe(nginx.url(nginx.site("1s", True)), server_name="localhost")

    assert measurement.error.startswith("TLS failure")
    assert measurement.closed_by is None
    assert measurement.idle_timeout_s is None


def test_it_verifies_the_certificate_with_a_given_trust_store_and_server_name(nginx):
    context = ssl.create_default_context(cafile=str(nginx.cert_path))

    measurement = probe(
        nginx.url(nginx.site("1s", True)), server_name="localhost", ssl_context=context
    )

    assert measurement.error is None
    assert measurement.idle_timeout_s == pytest.approx(1.0, abs=TOLERANCE_S)


def test_it_confirms_reuse_and_measures_from_the_end_of_the_second_response(nginx):
    measurement = probe(nginx.url(nginx.site("3s")), confirm_reuse_after_s=1.0)

    assert measurement.reuse_confirmed is True
    assert measurement.total_s >= 1.0
    assert measurement.idle_timeout_s == pytest.approx(3.0, abs=TOLERANCE_S)


def test_it_reports_no_reuse_when_the_server_closed_before_the_second_request(nginx):
    measurement = probe(nginx.url(nginx.site("1s")), confirm_reuse_after_s=2.0)

    assert measurement.reuse_confirmed is False
    assert measurement.idle_timeout_s == pytest.approx(1.0, abs=TOLERANCE_S)


def test_it_takes_the_close_time_from_the_kernel_when_the_event_loop_is_busy(nginx):
    async def probe_with_a_blocked_loop() -> Measurement:
        # Block the loop from 0.3 s to 2.3 s: nginx closes at 1 s, the probe reads it at 2.3 s.
        asyncio.get_running_loop().call_later(0.3, time.sleep, 2.0)
        return await measure(nginx.url(nginx.site("1s")))

    measurement = asyncio.run(probe_with_a_blocked_loop())

    assert measurement.idle_timeout_s == pytest.approx(1.0, abs=TOLERANCE_S)


def test_it_runs_many_probes_concurrently_and_yields_each_as_it_finishes(nginx):
    urls = [nginx.url(nginx.site("3s")), nginx.url(nginx.site("1s")), nginx.url(nginx.site("0"))]

    async def collect() -> list[tuple[ProbeSpec, Measurement]]:
        specs = [ProbeSpec(url=url, tag=index) for index, url in enumerate(urls)]
        return [pair async for pair in measure_many(specs, limit=3)]

    results = asyncio.run(collect())

    assert [spec.tag for spec, _ in results] == [2, 1, 0]
    assert [m.url for _, m in results] == urls[::-1]


def test_it_notices_a_server_that_lies_in_its_keep_alive_header():
    measurement = edge(edge_servers.lies_in_its_keep_alive_header)

    assert measurement.advertised_timeout_s == 60.0
    assert measurement.advertised_timeout_matched is False
    assert measurement.idle_timeout_s == pytest.approx(1.0, abs=TOLERANCE_S)


def test_it_matches_a_server_that_keeps_its_keep_alive_promise():
    measurement = edge(edge_servers.keeps_its_keep_alive_promise)

    assert measurement.advertised_timeout_s == 1.0
    assert measurement.advertised_timeout_matched is True


def test_it_reads_a_chunked_body_and_sees_the_close_right_after_it():
    measurement = edge(edge_servers.sends_chunked_then_closes)

    assert measurement.error is None
    assert measurement.status_code == 200
    assert measurement.closed_by == "server"
    assert measurement.closed_right_after_response
    assert not measurement.connection_close_announced


def test_it_reads_a_body_delimited_by_the_close():
    measurement = edge(edge_servers.ends_the_body_by_closing)

    assert measurement.error is None
    assert measurement.closed_right_after_response
    assert measurement.idle_timeout_s == 0.0


def test_it_tells_a_reset_from_a_fin():
    measurement = edge(edge_servers.resets_instead_of_fin)

    assert measurement.error is None
    assert measurement.closed_by == "server"
    assert measurement.closed_with == "reset"
    assert measurement.idle_timeout_s == pytest.approx(0.5, abs=TOLERANCE_S)


def test_it_stops_at_the_cap_when_the_server_never_closes():
    measurement = edge(edge_servers.never_closes, cap_s=1.5)

    assert measurement.error is None
    assert measurement.closed_by == "cap"
    assert measurement.closed_with is None
    assert measurement.idle_timeout_s is None
    assert measurement.as_json()["idle_timeout_s"] is None


def test_it_reports_a_response_that_stalls_mid_body_as_a_timeout():
    measurement = edge(edge_servers.stalls_mid_body, timeout_s=1.0)

    assert measurement.error == "timed out reading the response after 1 s"
    assert measurement.closed_by is None


def test_it_reports_a_refused_port_as_unreachable():
    measurement = probe(f"http://127.0.0.1:{free_port()}/", timeout_s=2.0)

    assert measurement.error.startswith("unreachable: 127.0.0.1:")
    assert "refused" in measurement.error.lower()
    assert measurement.status_code is None


def test_it_reports_an_unknown_host_as_a_dns_failure():
    measurement = probe("http://no-such-host.invalid/", timeout_s=5.0)

    assert measurement.error.startswith("DNS failure")


def test_it_records_a_503_with_its_status_code():
    measurement = edge(edge_servers.answers_503)

    assert measurement.error is None
    assert measurement.status_code == 503
    assert measurement.idle_timeout_s == pytest.approx(1.0, abs=TOLERANCE_S)


def test_it_skips_an_interim_100_continue_and_reads_a_bodyless_204():
    measurement = edge(edge_servers.says_continue_first)

    assert measurement.status_code == 204
    assert measurement.idle_timeout_s == pytest.approx(1.0, abs=TOLERANCE_S)


def test_it_gives_the_json_fields_the_command_prints(nginx_measurements):
    data = nginx_measurements[("5s 3", False)].as_json()

    assert data["closed_by"] == "server"
    assert data["advertised_timeout_s"] == 3.0
    assert data["status_code"] == 200
    assert data["idle_timeout_s"] == pytest.approx(5.0, abs=TOLERANCE_S)
    assert isinstance(data["started_at"], str)


def test_it_rejects_a_url_that_is_not_http_without_raising():
    measurement = probe("ftp://127.0.0.1/")

    assert measurement.error == "not an http(s) URL: 'ftp://127.0.0.1/'"

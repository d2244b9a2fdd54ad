"""The keep-alive measurement against a real nginx and against misbehaving servers."""

from __future__ import annotations

import asyncio
import ssl
import time
from datetime import UTC, datetime, timedelta

import pytest

from apps.probes.keepalive import Measurement, ProbeSpec, measure, measure_many
from tests.services import edge_servers, free_port
from tests.services.nginx import KEEPALIVE_TIMEOUTS, Nginx

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
    assert measurement.idle_timeout_s == pytest.approx(0.3, abs=TOLERANCE_S)


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
    measurement = edge(edge_servers.never_closes, cap_s=0.5)

    assert measurement.error is None
    assert measurement.closed_by == "cap"
    assert measurement.closed_with is None
    assert measurement.idle_timeout_s is None
    assert measurement.as_json()["idle_timeout_s"] is None


def test_it_reports_a_response_that_stalls_mid_body_as_a_timeout():
    measurement = edge(edge_servers.stalls_mid_body, timeout_s=0.3)

    assert measurement.error == "timed out reading the response after 0.3 s"
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
    assert measurement.idle_timeout_s == pytest.approx(0.2, abs=TOLERANCE_S)


def test_it_skips_an_interim_100_continue_and_reads_a_bodyless_204():
    measurement = edge(edge_servers.says_continue_first)

    assert measurement.status_code == 204
    assert measurement.idle_timeout_s == pytest.approx(0.2, abs=TOLERANCE_S)


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


# --- typed URLs and hostile servers ----------------------------------------------------------


def test_it_sends_a_non_ascii_path_and_query_percent_encoded_and_keeps_the_typed_url():
    heads: list[bytes] = []

    async def run() -> Measurement:
        async with edge_servers.serve(edge_servers.closes_soon, heads=heads) as port:
            return await measure(f"http://127.0.0.1:{port}/café/€?q=ü x", timeout_s=5)

    measurement = asyncio.run(run())

    assert measurement.error is None
    assert measurement.url.endswith("/café/€?q=ü x")
    assert heads[0].startswith(b"GET /caf%C3%A9/%E2%82%AC?q=%C3%BC%20x HTTP/1.1\r\n")


def test_it_sends_an_idn_name_as_its_a_label_in_sni_host_and_the_certificate_check(tmp_path):
    from tests.services.nginx import write_self_signed_certificate

    a_label = "xn--e1afmkfd.xn--p1ai"
    cert, key = write_self_signed_certificate(tmp_path, a_label)
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)
    sni: list[str | None] = []
    server_tls.sni_callback = lambda _sock, name, _ctx: sni.append(name)
    trust = ssl.create_default_context(cafile=str(cert))
    heads: list[bytes] = []

    async def run() -> Measurement:
        async with edge_servers.serve(
            edge_servers.closes_soon, heads=heads, tls=server_tls
        ) as port:
            return await measure(
                f"https://127.0.0.1:{port}/", server_name="Пример.рф", ssl_context=trust
            )

    measurement = asyncio.run(run())

    assert measurement.error is None, measurement.error
    assert sni == [a_label]
    assert f"Host: {a_label}:".encode() in heads[0]
    assert measurement.tls_expires is not None


def test_it_asks_dns_for_the_a_label_of_an_idn_host():
    measurement = probe("http://пример.invalid/café", timeout_s=5.0)

    assert measurement.error.startswith("DNS failure: xn--e1afmkfd.invalid:")


async def _hostile_batch(
    ports: dict[str, int], timeout_s: float
) -> list[tuple[ProbeSpec, Measurement]]:
    """Every hostile server, a typed URL that cannot be sent, and one good server, at once."""
    # The slowloris ends on ``timeout_s``; the others on a limit of size or count (64 MiB of body
    # takes seconds to read on a loaded machine): their time is not what they test.
    specs = [
        ProbeSpec(
            f"http://127.0.0.1:{ports[name]}/",
            cap_s=2,
            timeout_s=timeout_s if name == "slowloris trickle" else 30.0,
            tag=name,
        )
        for name in edge_servers.HOSTILE
    ]
    good = ports["closes soon"]
    specs.append(ProbeSpec(f"http://127.0.0.1:{good}/ünïcode/€", cap_s=5, tag="good"))
    specs.append(ProbeSpec("http://exa mple.com/", tag="unsendable"))
    specs.append(ProbeSpec("https://пример.invalid/", timeout_s=timeout_s, tag="idn"))
    async with asyncio.timeout(60):  # the batch must never hang: fail, do not wait
        return [pair async for pair in measure_many(specs, limit=len(specs))]


def test_a_batch_with_hostile_servers_yields_one_result_per_probe_and_never_waits_on_them():
    # The servers run in a process of their own: the good one closes after its 0.2 s whatever
    # the hostile ones make this loop do (in this loop, a loaded machine delayed it by seconds).
    with edge_servers.serve_in_a_process([*edge_servers.HOSTILE, "closes soon"]) as ports:
        results = asyncio.run(_hostile_batch(ports, timeout_s=1.5))
    by_tag = {spec.tag: (measurement, place) for place, (spec, measurement) in enumerate(results)}

    assert sorted(by_tag) == sorted([*edge_servers.HOSTILE, "good", "unsendable", "idn"])
    assert len(results) == len(by_tag)
    good, good_place = by_tag["good"]
    assert good.error is None and good.idle_timeout_s == pytest.approx(0.2, abs=TOLERANCE_S)
    assert good_place < by_tag["slowloris trickle"][1]  # yielded as it ended, not held back
    assert by_tag["unsendable"][0].error.startswith("not a valid host name")
    assert by_tag["idn"][0].error.startswith("DNS failure: xn--e1afmkfd.invalid")
    expected = {
        "endless headers": "the response head larger than 64 KiB",
        "huge status line": "response line longer than 64 KiB",
        "slowloris trickle": "timed out reading the response after 1.5 s",
        "endless 100 Continue": "more than 10 interim (1xx) responses",
        "endless chunks": "more than 100000 chunks in the response body",
        "flood after the response": "the server sent more than 64 KiB after the response",
        "negative Content-Length": "a Content-Length that is not one number",
        "body without end": "the response body larger than 64 MiB",
    }
    for tag, error in expected.items():
        assert by_tag[tag][0].error == error, tag
    not_text, _ = by_tag["bytes that are not text"]
    assert (not_text.error, not_text.status_code) == (None, 200)
    huge, _ = by_tag["400-digit keep-alive timeout"]
    assert huge.error is None and huge.advertised_timeout_s is None

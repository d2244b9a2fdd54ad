"""The pure verdict on one keep-alive measurement."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from apps.lib.status import Status
from apps.probes.keepalive import Measurement
from apps.probes.verdict import Thresholds, probe_verdict

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)


def measured(idle_s: float | None, **fields) -> Measurement:
    values = {
        "url": "https://example.test/",
        "started_at": NOW,
        "peer_address": "192.0.2.10",
        "status_code": 200,
        "idle_timeout_s": idle_s,
        "closed_by": "server" if idle_s is not None else "cap",
        "closed_with": "fin" if idle_s is not None else None,
        "closed_right_after_response": idle_s is not None and idle_s < 0.1,
        "total_s": 0.25,
    }
    values.update(fields)
    return Measurement(**values)


# The seed's hand measurements (issue 6): site, idle timeout seen, what its operator expects.
SEED_SITES = [
    ("slashdot", 0.0, (0, 0), Status.OK),
    ("lwn", 5.0, (5, 10), Status.OK),
    ("yahoo", 10.0, (5, 10), Status.OK),
    ("nginx.org", 60.0, (60, 75), Status.OK),
    ("wikipedia", 60.0, (75, 120), Status.WARNING),
    ("google", 240.0, (60, 75), Status.WARNING),
    ("twitter", 900.0, (900, 900), Status.OK),
]


@pytest.mark.parametrize(
    ("site", "idle_s", "expected_range", "status"), SEED_SITES, ids=[s[0] for s in SEED_SITES]
)
def test_it_judges_the_seeds_measured_sites_against_their_expected_ranges(
    site, idle_s, expected_range, status
):
    verdict = probe_verdict(measured(idle_s), expected_range, now=NOW)

    assert verdict.status == status


def test_it_warns_with_the_measured_and_expected_timeouts():
    verdict = probe_verdict(measured(4.0), (60, 75), now=NOW)

    assert verdict.status == Status.WARNING
    assert verdict.reason == "closes idle connections after 4.0 s, expected 60-75 s"


def test_it_says_ok_with_what_it_measured():
    verdict = probe_verdict(measured(61.2), (60, 75), now=NOW)

    assert verdict.status == Status.OK
    assert verdict.reason == "closes idle connections after 61.2 s"


def test_it_describes_a_close_right_after_the_response():
    verdict = probe_verdict(measured(0.0), None, now=NOW)

    assert verdict.reason == "closes connections right after the response"


def test_it_warns_when_the_connection_outlived_the_cap_beyond_the_expected_range():
    verdict = probe_verdict(measured(None, cap_s=1200), (60, 75), now=NOW)

    assert verdict.status == Status.WARNING
    assert verdict.reason == "kept the idle connection open past the 1200 s cap, expected 60-75 s"


def test_it_accepts_reaching_the_cap_when_the_expected_range_goes_beyond_it():
    verdict = probe_verdict(measured(None, cap_s=600), (900, 900), now=NOW)

    assert verdict.status == Status.OK


@pytest.mark.parametrize(
    "error",
    [
        "unreachable: 192.0.2.10:443: Connection refused",
        "TLS failure: certificate has expired",
        "DNS failure: example.test: Name or service not known",
        "timed out connecting after 10 s",
    ],
)
def test_it_is_critical_when_the_target_could_not_be_measured(error):
    failed = measured(None, error=error, status_code=None, closed_by=None)

    verdict = probe_verdict(failed, (60, 75), now=NOW)

    assert verdict.status == Status.CRITICAL
    assert verdict.reason == error


def test_it_names_the_status_code_of_a_response_that_timed_out_mid_body():
    stalled = measured(None, error="timed out reading the response after 10 s", closed_by=None)

    verdict = probe_verdict(stalled, None, now=NOW)

    assert verdict.status == Status.CRITICAL
    assert verdict.reason == "timed out reading the response after 10 s (HTTP 200)"


@pytest.mark.parametrize(
    ("code", "status"),
    [(500, Status.CRITICAL), (503, Status.CRITICAL), (404, Status.OK), (301, Status.OK)],
)
def test_it_is_critical_for_a_5xx_answer_only(code, status):
    verdict = probe_verdict(measured(60.0, status_code=code), (60, 75), now=NOW)

    assert verdict.status == status
    if status == Status.CRITICAL:
        assert verdict.reason == f"answered HTTP {code}"


@pytest.mark.parametrize(
    ("days_left", "status"),
    [
        (30, Status.OK),
        (15, Status.OK),
        (14, Status.WARNING),
        (3, Status.WARNING),
        (-1, Status.CRITICAL),
    ],
)
def test_it_watches_the_certificate_expiry(days_left, status):
    expires = NOW + timedelta(days=days_left)

    verdict = probe_verdict(
        measured(60.0, tls_expires=expires),
        (60, 75),
        thresholds=Thresholds(cert_warn_days=14),
        now=NOW,
    )

    assert verdict.status == status
    assert verdict.figures["tls_days_left"] == pytest.approx(days_left)


def test_it_gives_the_certificate_date_in_the_warning():
    expires = NOW + timedelta(days=3)

    verdict = probe_verdict(measured(60.0, tls_expires=expires), None, now=NOW)

    assert verdict.reason == "TLS certificate expires in 3 days (2026-11-25)"


@pytest.mark.parametrize(
    ("previous_s", "status"), [(60.0, Status.OK), (60.9, Status.OK), (75.0, Status.WARNING)]
)
def test_it_warns_when_the_timeout_changed_beyond_the_tolerance(previous_s, status):
    verdict = probe_verdict(
        measured(61.0),
        None,
        previous_idle_s=previous_s,
        thresholds=Thresholds(tolerance_s=1.0),
        now=NOW,
    )

    assert verdict.status == status


def test_it_joins_every_warning_into_one_reason():
    m = measured(4.0, tls_expires=NOW + timedelta(days=2))

    verdict = probe_verdict(m, (60, 75), previous_idle_s=60.0, now=NOW)

    assert verdict.status == Status.WARNING
    assert verdict.reason == (
        "closes idle connections after 4.0 s, expected 60-75 s; "
        "idle timeout changed from 60.0 s to 4.0 s; "
        "TLS certificate expires in 2 days (2026-11-24)"
    )


def test_it_keeps_the_figures_behind_the_verdict():
    m = replace(measured(5.0), advertised_timeout_s=3.0)

    verdict = probe_verdict(m, (5, 5), now=NOW)

    assert verdict.figures == {
        "idle_timeout_s": 5.0,
        "closed_by": "server",
        "advertised_timeout_s": 3.0,
        "status_code": 200,
        "total_s": 0.25,
    }

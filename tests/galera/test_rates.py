"""Counters read at two moments as a rate per minute, or a share of the interval (pure)."""

from __future__ import annotations

import pytest

from apps.galera.rates import (
    FLOW_CONTROL_PAUSED,
    Reading,
    cert_failures,
    interval_since,
    paused_share,
    per_minute,
    repl_latency_s,
    since_previous,
)


@pytest.mark.parametrize(
    ("previous", "current", "rate"),
    [
        (Reading(100, 0.0), Reading(130, 60.0), 30.0),
        (Reading(100, 0.0), Reading(110, 30.0), 20.0),
        (Reading(100, 0.0), Reading(100, 60.0), 0.0),
        # A restart (or FLUSH STATUS) in between: it counted from 0 since.
        (Reading(500, 0.0), Reading(12, 120.0), 6.0),
    ],
    ids=["a-minute", "half-a-minute", "none", "reset"],
)
def test_it_gives_the_increase_per_minute(previous, current, rate):
    assert per_minute(previous, current) == pytest.approx(rate)


@pytest.mark.parametrize(
    ("previous", "current"),
    [
        (None, Reading(1, 60.0)),
        (Reading(1, 0.0), None),
        (Reading(1, 60.0), Reading(5, 60.0)),
        (Reading(1, 60.0), Reading(5, 30.0)),
    ],
    ids=["no-previous", "no-current", "same-moment", "backwards"],
)
def test_it_cannot_tell_without_two_readings_apart_in_time(previous, current):
    assert per_minute(previous, current) is None


def test_it_rates_a_node_against_its_facts_in_the_previous_snapshot():
    before = {"cert_failures": 10, "read_at": 1000.0, "cert_failures_per_minute": 3.0}
    assert since_previous(40, 1060.0, before, 1001.0) == pytest.approx(30.0)
    # A pushing node that did not report again: the same reading keeps the rate it gave.
    assert since_previous(10, 1000.0, before, 1001.0) == 3.0
    # Snapshots from before read_at was kept: their own time.
    assert since_previous(40, 1060.0, {"cert_failures": 10}, 1000.0) == pytest.approx(30.0)
    assert since_previous(40, 1060.0, None, None) is None
    assert since_previous(None, 1060.0, before, 1001.0) is None


@pytest.mark.parametrize(
    ("value", "count"),
    [("12", 12), ("", None), ("-1", None), ("1e3", None), ("٣", None), ("9" * 19, None)],
)
def test_it_reads_the_counter_only_as_plain_digits(value, count):
    assert cert_failures({"wsrep_local_cert_failures": value}) == count


# --- flow control: the share of the interval paused ----------------------------------------


@pytest.mark.parametrize(
    ("previous", "current", "share"),
    [
        (Reading(0, 0.0), Reading(15_000_000_000, 60.0), 0.25),
        (Reading(20_222_491_180, 0.0), Reading(20_222_491_180, 60.0), 0.0),
        # Paused the whole interval, read a moment after the poll began: at most all of it.
        (Reading(0, 0.0), Reading(61_000_000_000, 60.0), 1.0),
        # Restarted in between: what it counted since its start.
        (Reading(9_000_000_000, 0.0), Reading(3_000_000_000, 60.0), 0.05),
    ],
    ids=["a-quarter", "none", "capped", "restart"],
)
def test_it_gives_the_share_of_the_interval_paused(previous, current, share):
    assert paused_share(previous, current) == pytest.approx(share)


def test_it_keeps_a_pushed_nodes_share_until_it_reports_again():
    before = {
        "flow_control_paused_ns": 1_000_000_000,
        "read_at": 1000.0,
        "flow_control_paused_share": 0.5,
        "interval_s": 60.0,
    }
    share = since_previous(31_000_000_000, 1060.0, before, 1001.0, FLOW_CONTROL_PAUSED)
    assert share == pytest.approx(0.5)
    assert interval_since(1060.0, before, 1001.0) == 60.0
    # The same push read again: the share and the interval it had.
    assert since_previous(1_000_000_000, 1000.0, before, 1001.0, FLOW_CONTROL_PAUSED) == 0.5
    assert interval_since(1000.0, before, 1001.0) == 60.0
    # A snapshot from before the counter was kept: nothing to compare with yet.
    assert since_previous(1, 1060.0, {"cert_failures": 1}, 1000.0, FLOW_CONTROL_PAUSED) is None


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("0.000331546/0.000557895/0.0013431/0.000359543/6", 0.000557895),  # MariaDB 10.11
        ("0.000163025/0.250166/0.500169/0.250003/2", 0.250166),
        ("0/0/0/0/0", None),  # no samples yet (Galera 25.3)
        ("1/nan/1/0/3", None),
        ("1/2/3", None),
        ("0/99999/0/0/1", None),
        (None, None),
    ],
)
def test_it_reads_the_average_replication_latency(value, seconds):
    variables = {} if value is None else {"wsrep_evs_repl_latency": value}
    assert repl_latency_s(variables) == seconds

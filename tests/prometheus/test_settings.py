"""VIGIL_METRICS_ALLOW: a malformed network stops the start, naming the variable."""

from __future__ import annotations

from tests.test_settings import start


def test_it_names_a_malformed_allow_list():
    result = start(VIGIL_METRICS_ALLOW="10.0.0.0/8,not-an-address")
    assert result.returncode != 0
    assert "Invalid value for VIGIL_METRICS_ALLOW" in result.stderr


def test_it_takes_addresses_and_networks():
    assert start(VIGIL_METRICS_ALLOW="10.0.0.0/8, 192.0.2.7,2001:db8::/32").returncode == 0

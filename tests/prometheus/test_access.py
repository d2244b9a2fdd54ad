"""The allow-list check of /metrics (pure)."""

from __future__ import annotations

import pytest

from apps.prometheus.access import address_allowed, networks

ALLOWED = networks(("10.0.0.0/8", "192.0.2.7", "2001:db8::/32"))


@pytest.mark.parametrize(
    ("address", "allowed"),
    [
        ("10.1.2.3", True),
        ("192.0.2.7", True),
        ("::ffff:192.0.2.7", True),  # IPv4 on a dual-stack socket
        ("2001:db8::1", True),
        ("fe80::1%eth0", False),
        ("192.0.2.8", False),
        ("11.0.0.1", False),
        ("", False),
        ("not-an-address", False),
    ],
)
def test_it_allows_only_addresses_in_the_list(address, allowed):
    assert address_allowed(address, ALLOWED) is allowed


def test_it_allows_nobody_when_the_list_is_empty():
    assert not address_allowed("127.0.0.1", networks(()))

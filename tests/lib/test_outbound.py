"""The outbound guard's rules, on addresses and on real resolution of loopback names."""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest
from django.core.exceptions import ValidationError

from apps.lib import outbound
from apps.lib.outbound import OutboundRefused, Policy, judge

STRICT = Policy()
LOOPBACK = Policy(allow_loopback=True)


@pytest.mark.parametrize(
    ("address", "rule"),
    [
        ("169.254.169.254", "metadata"),
        ("fd00:ec2::254", "metadata"),
        ("fd00:ec2::253", "AWS service"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("fe80::1%2", "link-local"),
        ("0.0.0.0", "unspecified"),
        ("0.1.2.3", "unspecified"),
        ("::", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "reserved"),
        ("::ffff:169.254.169.254", "metadata"),
        ("64:ff9b::a9fe:a9fe", "metadata"),
        ("2002:a9fe:a9fe::1", "metadata"),
    ],
)
def test_it_always_refuses_link_local_metadata_and_reserved_addresses(address, rule):
    assert rule in judge(address, LOOPBACK)
    assert rule in judge(address, Policy(allow=outbound.parse_networks(["0.0.0.0/0", "::/0"])))


@pytest.mark.parametrize("address", ["127.0.0.1", "127.8.9.10", "::1"])
def test_it_refuses_loopback_unless_allowed(address):
    assert "loopback" in judge(address, STRICT)
    assert judge(address, LOOPBACK) is None


def test_it_refuses_loopback_hidden_in_a_6to4_address():
    assert "loopback" in judge("2002:7f00:1::1", STRICT)


@pytest.mark.parametrize("address", ["10.0.0.5", "172.16.3.4", "192.168.1.1", "8.8.8.8", "fd12::1"])
def test_it_allows_private_and_public_addresses_by_default(address):
    assert judge(address, STRICT) is None


def test_deny_networks_narrow_what_is_allowed():
    policy = Policy(deny=outbound.parse_networks(["10.0.0.0/16"]))
    assert "VIGIL_OUTBOUND_DENY" in judge("10.0.3.4", policy)
    assert judge("10.1.3.4", policy) is None


def test_allow_networks_are_the_only_ones_allowed():
    policy = Policy(allow=outbound.parse_networks(["10.20.0.0/16", "2001:db8::/32"]))
    assert judge("10.20.1.1", policy) is None
    assert judge("2001:db8::5", policy) is None
    assert "VIGIL_OUTBOUND_ALLOW" in judge("10.21.1.1", policy)
    assert "VIGIL_OUTBOUND_ALLOW" in judge("8.8.8.8", policy)


def test_a_bad_network_is_named():
    with pytest.raises(ValueError, match="'10.0.0.0/33'"):
        outbound.parse_networks(["10.0.0.0/33"])


def test_the_refusal_names_the_host_the_address_and_the_rule():
    with pytest.raises(OutboundRefused) as caught:
        outbound.check("169.254.169.254", STRICT, host="metadata.example")
    assert str(caught.value) == (
        "metadata.example (169.254.169.254) is refused: the instance metadata service"
    )


def test_check_host_judges_literals_and_names_that_resolve():
    with pytest.raises(OutboundRefused, match="metadata"):
        outbound.check_host("169.254.169.254", LOOPBACK)
    with pytest.raises(OutboundRefused, match="loopback"):
        outbound.check_host("[::1]", STRICT)
    with pytest.raises(OutboundRefused, match="loopback"):
        outbound.check_host("localhost", STRICT)
    outbound.check_host("localhost", LOOPBACK)
    outbound.check_host("name-that-does-not-resolve.invalid", STRICT)


@pytest.fixture
def listener():
    server = socket.create_server(("127.0.0.1", 0))
    accepted = []

    def accept() -> None:
        try:
            connection, _ = server.accept()
        except OSError:  # closed at the end of the test
            return
        accepted.append(connection)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    server.close()
    for connection in accepted:
        connection.close()


def test_connect_reaches_an_allowed_address_and_refuses_before_connecting(listener):
    with pytest.raises(OutboundRefused, match="loopback"):
        outbound.connect("localhost", listener, timeout=2, policy=STRICT)
    with outbound.connect("localhost", listener, timeout=2, policy=LOOPBACK) as sock:
        assert sock.getpeername()[1] == listener


def test_resolve_async_judges_every_address():
    resolved = asyncio.run(outbound.resolve_async("localhost", 80, LOOPBACK))
    assert {item.ip for item in resolved} <= {"127.0.0.1", "::1"}
    with pytest.raises(OutboundRefused):
        asyncio.run(outbound.resolve_async("localhost", 80, STRICT))


def test_the_policy_follows_the_settings(settings):
    settings.VIGIL_OUTBOUND_ALLOW_LOOPBACK = False
    settings.VIGIL_OUTBOUND_DENY = ["10.9.0.0/16"]
    settings.VIGIL_OUTBOUND_ALLOW = []
    policy = Policy.from_settings()
    assert not policy.allow_loopback
    assert "VIGIL_OUTBOUND_DENY" in judge("10.9.1.1", policy)


def test_a_url_is_judged_by_the_name_a_browser_would_resolve(hosts_entry):
    # faß is xn--fa-hia in IDNA 2008 (browsers, the probes) but fass in Python's IDNA 2003.
    name = hosts_entry("169.254.169.254", label="xn--fa-hia")
    typed = "https://faß." + name.split(".", 1)[1] + "/"
    with pytest.raises(ValidationError, match="metadata"):
        outbound.validate_url_host(typed)

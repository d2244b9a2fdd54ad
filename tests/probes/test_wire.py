"""A typed URL turned into what a browser sends: A-labels and a percent-encoded path."""

from __future__ import annotations

import pytest

from apps.probes.wire import BadURL, encode_host, to_wire


def test_it_sends_an_idn_host_as_its_a_label():
    wire = to_wire("https://пример.рф/")

    assert wire.host == "xn--e1afmkfd.xn--p1ai"
    assert wire.server_name == "xn--e1afmkfd.xn--p1ai"
    assert wire.host_header == "xn--e1afmkfd.xn--p1ai"
    assert wire.port == 443


def test_it_maps_the_host_as_uts46_does_in_browsers():
    assert encode_host("Bücher.Example") == "xn--bcher-kva.example"
    assert encode_host("faß.de") == "xn--fa-hia.de"  # non-transitional, as browsers
    assert encode_host("пример。рф") == "xn--e1afmkfd.xn--p1ai"  # an ideographic full stop
    assert encode_host("ＥＸＡＭＰＬＥ.com") == "example.com"  # full-width letters
    assert encode_host("_dmarc.example.com") == "_dmarc.example.com"
    assert encode_host("example.com.") == "example.com"


def test_it_percent_encodes_a_non_ascii_path_and_query_as_utf_8():
    wire = to_wire("http://127.0.0.1:8080/café/€?q=ü x&r=\"<>'#frag")

    assert wire.target == "/caf%C3%A9/%E2%82%AC?q=%C3%BC%20x&r=%22%3C%3E%27"
    assert wire.host_header == "127.0.0.1:8080"


def test_it_keeps_existing_escapes_and_turns_backslashes_into_slashes():
    assert to_wire("http://h/a%2Fb\\c?x=%41").target == "/a%2Fb/c?x=%41"


def test_it_never_lets_a_control_character_into_the_request_line():
    wire = to_wire("http://h/a\x00b\x7fc\x1bd")

    assert wire.target == "/a%00b%7Fc%1Bd"
    assert wire.target.isascii() and wire.target.isprintable()


def test_it_brackets_an_ipv6_literal_in_the_host_header():
    wire = to_wire("http://[::1]:81/")

    assert (wire.host, wire.host_header) == ("::1", "[::1]:81")


def test_it_uses_the_server_name_for_sni_and_host_but_connects_to_the_url_host():
    wire = to_wire("https://127.0.0.1:8443/", server_name="Пример.рф")

    assert (wire.host, wire.server_name) == ("127.0.0.1", "xn--e1afmkfd.xn--p1ai")
    assert wire.host_header == "xn--e1afmkfd.xn--p1ai:8443"


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/",
        "http:///path",
        "http://exa mple.com/",
        "http://a..b/",
        "http://example.com:99999/",
        "http://example.com:0/",
        "http://" + "a" * 64 + ".com/",
        "http://" + ".".join(["abcdefghi"] * 30) + "/",
    ],
)
def test_it_refuses_a_url_it_cannot_send_with_a_clear_message(url):
    with pytest.raises(BadURL):
        to_wire(url)


def test_it_refuses_a_host_idna_cannot_encode():
    with pytest.raises(BadURL, match="not a valid host name"):
        to_wire("http://\u0378bad.com/")  # an unassigned code point

"""gzip for kept answers (apps/lib/compression.py): who accepts it, and the same bytes."""

from __future__ import annotations

import gzip

import pytest

from apps.lib.compression import accepts_gzip, compress


@pytest.mark.parametrize(
    ("header", "accepted"),
    [
        ("gzip, deflate", True),  # requests, httpx
        ("gzip, deflate, br, zstd", True),  # browsers
        ("deflate, gzip;q=1.0, *;q=0.5", True),  # curl --compressed
        ("x-gzip", True),
        ("GZIP", True),
        ("*", True),
        ("br, *;q=0.1", True),
        ("", False),  # curl, urllib: nothing said
        ("identity", False),
        ("br", False),
        ("gzip;q=0", False),
        ("gzip;q=0.0, *", False),  # gzip refused by name, whatever * says
        ("*;q=0", False),
        ("gzip;q=nonsense", False),
    ],
)
def test_it_reads_accept_encoding_as_rfc_9110_does(header, accepted):
    assert accepts_gzip({"HTTP_ACCEPT_ENCODING": header}) is accepted


def test_it_takes_no_header_as_no_gzip():
    assert accepts_gzip({}) is False


def test_it_compresses_a_body_to_the_same_bytes_every_time():
    body = b'{"results": [' + b'{"name": "fs"},' * 1000 + b"]}"
    assert compress(body) == compress(body)
    assert gzip.decompress(compress(body)) == body

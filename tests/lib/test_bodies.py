"""Bounded request bodies for push endpoints (apps.lib.bodies), on Django's own requests."""

from __future__ import annotations

import io

import pytest
from django.test import RequestFactory

from apps.lib.bodies import BodyRefused, decode_text, load_json, read_body, read_payload


def request(body: bytes = b"", content_type: str = "application/json", **meta):
    return RequestFactory().generic("POST", "/push", body, content_type=content_type, **meta)


def test_it_reads_a_body_within_the_limit():
    assert read_body(request(b"x" * 100), 100) == b"x" * 100


def test_it_refuses_a_declared_length_over_the_limit_without_reading():
    with pytest.raises(BodyRefused) as refused:
        read_body(request(b"x" * 101), 100)
    assert (refused.value.status, str(refused.value)) == (413, "The body is larger than 100 bytes")


def test_it_reads_a_chunked_body_in_pieces_and_stops_past_the_limit():
    stream = io.BytesIO(b"y" * 10_000_000)
    chunked = request(
        CONTENT_LENGTH="",
        HTTP_TRANSFER_ENCODING="chunked",
        **{"wsgi.input": stream, "wsgi.input_terminated": True},
    )
    with pytest.raises(BodyRefused) as refused:
        read_body(chunked, 1024 * 1024)
    assert refused.value.status == 413
    assert stream.tell() == 1024 * 1024 + 1


def test_it_refuses_a_chunked_body_a_server_cannot_end():
    chunked = request(CONTENT_LENGTH="", HTTP_TRANSFER_ENCODING="chunked")
    with pytest.raises(BodyRefused) as refused:
        read_body(chunked, 100)
    assert refused.value.status == 411


@pytest.mark.parametrize("length", ["abc", "-1"])
def test_it_refuses_a_content_length_that_is_not_a_length(length):
    with pytest.raises(BodyRefused) as refused:
        read_body(request(b"", CONTENT_LENGTH=length), 100)
    assert refused.value.status == 400


def test_it_keeps_undecodable_bytes_as_surrogates_for_the_parser_to_point_at():
    assert decode_text(b"a\xffb", None) == "a\udcffb"
    assert decode_text("é".encode("latin-1"), "latin-1") == "é"


@pytest.mark.parametrize("charset", ["base64", "rot13", "hex", "zlib", "bz2", "nope", "x" * 500])
def test_it_refuses_a_charset_that_is_not_a_text_encoding(charset):
    with pytest.raises(BodyRefused, match="Unknown charset"):
        decode_text(b"abc", charset)


@pytest.mark.parametrize("text", ["[" * 100_000, "{", "9" * 5000, '{"x": NaN}', "[-Infinity]"])
def test_it_answers_400_for_json_that_is_not_json(text):
    with pytest.raises(BodyRefused, match="The body is not JSON") as refused:
        load_json(text)
    assert refused.value.status == 400


def test_it_reads_json_or_plain_text_and_refuses_other_media_types():
    assert read_payload(request(b'{"a": 1}'), 100) == {"a": 1}
    assert read_payload(request(b"hi", "text/plain"), 100, text_field="t") == {"t": "hi"}
    with pytest.raises(BodyRefused) as refused:
        read_payload(request(b"hi", "text/plain"), 100)
    assert refused.value.status == 415

"""Request bodies of push endpoints, read with a bound (RAID reports today, other agents later).

DRF reads a request's stream whole, so Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE`` never applies
to an API view; a push endpoint calls ``read_payload`` (or ``read_body``) instead of touching
``request.data``. A ``Content-Length`` over the limit is a 413 before a byte is read, a body
without one is read in pieces and refused as it passes the limit (411 where the server cannot
mark its end); a charset that is not a text encoding, or JSON that is not JSON, too deep, or
holding ``NaN``/``Infinity``, is a 400; undecodable bytes arrive as lone surrogates so that the
parser behind can name their line. ``BodyRefused`` carries the status and the message.
"""

from __future__ import annotations

import codecs
import json
from typing import Any

from django.http import HttpRequest
from rest_framework import exceptions, parsers

__all__ = [
    "BodyRefused",
    "PlainTextParser",
    "decode_text",
    "load_json",
    "read_body",
    "read_payload",
]

_PIECE = 64 * 1024


class BodyRefused(Exception):
    """A request body the endpoint will not take; ``status`` is the HTTP answer."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _size(limit: int) -> str:
    if limit >= 1024 * 1024 and limit % (1024 * 1024) == 0:
        return f"{limit // (1024 * 1024)} MiB"
    if limit >= 1024 and limit % 1024 == 0:
        return f"{limit // 1024} KiB"
    return f"{limit} bytes"


def read_body(request: Any, limit: int) -> bytes:
    """The body of ``request`` (Django's or DRF's), at most ``limit`` bytes; ``BodyRefused``."""
    http: HttpRequest = getattr(request, "_request", request)
    too_large = BodyRefused(f"The body is larger than {_size(limit)}", 413)
    declared = http.META.get("CONTENT_LENGTH")
    if declared not in (None, ""):
        try:
            length = int(declared)
        except ValueError:
            raise BodyRefused(f"Content-Length {declared[:20]!r} is not a number") from None
        if length < 0:
            raise BodyRefused("Content-Length is negative")
        if length > limit:
            raise too_large
        return _read(http.read, limit, too_large)
    if "chunked" not in http.META.get("HTTP_TRANSFER_ENCODING", "").lower():
        return b""
    if not http.META.get("wsgi.input_terminated"):
        raise BodyRefused("Send a Content-Length with the body", 411)
    return _read(http.META["wsgi.input"].read, limit, too_large)


def _read(read: Any, limit: int, too_large: BodyRefused) -> bytes:
    pieces: list[bytes] = []
    size = 0
    while piece := read(min(_PIECE, limit + 1 - size)):
        pieces.append(piece)
        size += len(piece)
        if size > limit:
            raise too_large
    return b"".join(pieces)


def decode_text(body: bytes, charset: str | None) -> str:
    """``body`` as text in ``charset`` (UTF-8 when none); undecodable bytes become lone
    surrogates (U+DC80..U+DCFF) for the parser to point at; an unknown charset is refused."""
    charset = (charset or "utf-8").strip()
    try:
        codecs.lookup(charset)
        b"a".decode(charset, "ignore")  # LookupError for codecs that are not text (base64)
    except (LookupError, ValueError):
        raise BodyRefused(f"Unknown charset {charset[:40]!r}") from None
    try:
        return body.decode(charset, errors="surrogateescape")
    except UnicodeError as exc:  # codecs that cannot use the handler (utf-16 odd lengths...)
        raise BodyRefused(f"The body is not {charset} text: {exc.reason}") from None


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def load_json(text: str) -> object:
    """``json.loads`` that answers 400 for anything that is not (reasonable) JSON: nesting
    deeper than Python's parser goes, and ``NaN``/``Infinity``, which JSON does not have."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise BodyRefused(f"The body is not JSON: {str(exc)[:200]}") from None


def read_payload(request: Any, limit: int, *, text_field: str | None = None) -> object:
    """The body as JSON (``application/json``), or as ``{text_field: text}`` for
    ``text/plain`` when ``text_field`` is given; other media types are refused (415)."""
    http: HttpRequest = getattr(request, "_request", request)
    media_type = http.content_type or ""
    charset = http.content_params.get("charset")
    if media_type == "application/json" or media_type.endswith("+json"):
        return load_json(decode_text(read_body(http, limit), charset))
    if text_field is not None and media_type == "text/plain":
        return {text_field: decode_text(read_body(http, limit), charset)}
    accepted = "application/json" + (" or text/plain" if text_field else "")
    raise BodyRefused(f"Send {accepted}, not {media_type or 'no content type'!r}", 415)


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser (every API body), with a body nested deeper than Python's parser goes
    refused as other malformed JSON is, a 400: ``json`` raises RecursionError there, which is
    not the ValueError DRF turns into a ParseError."""

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError("JSON parse error - nested too deep") from None


class PlainTextParser(parsers.BaseParser):
    """Declares ``text/plain`` for content negotiation and the schema; the report view reads
    its body itself, bounded (``apps.lib.bodies.read_payload``)."""

    media_type = "text/plain"

    def parse(self, stream, media_type=None, parser_context=None) -> dict[str, Any]:
        raise exceptions.UnsupportedMediaType(media_type)

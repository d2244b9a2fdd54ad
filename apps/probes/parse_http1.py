"""Reading one HTTP/1.1 response off an asyncio stream, with arrival times (adapter helper).

``TimedReader`` is an ``asyncio.StreamReader`` that stamps when response bytes and the close
arrive (on Linux with the kernel's receive time, ``TCP_INFO``, so a busy event loop does not
skew them); ``read_response`` reads the status line, headers and whole body and discards the
body. The server is not trusted: lines, head, body and chunks are bounded (``READ_SIZE``,
``MAX_HEAD_BYTES``, ``MAX_BODY_BYTES``, ``MAX_CHUNKS``) and past a bound the probe ends with a
``ProbeError`` saying which. An error never quotes what the server sent (the first bytes of
whatever answered would map internal services for viewers): it names the kind of answer
(``answer_kind``).
"""

from __future__ import annotations

import asyncio
import re
import socket
import ssl
import struct
import time
from dataclasses import dataclass
from typing import Any, Literal

READ_SIZE = 65536
CONNECTION_ERRORS = (OSError, EOFError, ssl.SSLError, asyncio.IncompleteReadError)
MAX_HEAD_BYTES = 64 * 1024
MAX_INTERIM_RESPONSES = 10
MAX_BODY_BYTES = 64 * 1024 * 1024
MAX_CHUNKS = 100_000
_MAX_HEADER_LINES = 200
_KEEP_ALIVE_TIMEOUT = re.compile(
    r"(?:^|[\s,;])timeout\s*=\s*\"?([0-9]{1,9}(?:\.[0-9]{1,6})?)(?![0-9.])", re.IGNORECASE
)
_STATUS_LINE = re.compile(r"HTTP/[0-9](?:\.[0-9])?\s+([0-9]{3})(?:\s|$)", re.ASCII)
_LENGTH = re.compile(r"[0-9]{1,18}", re.ASCII)
_CHUNK_SIZE = re.compile(r"[0-9A-Fa-f]{1,15}", re.ASCII)
_TCP_INFO = getattr(socket, "TCP_INFO", None)  # Linux

# What answered instead of HTTP, by its first bytes (as latin-1 text); first match wins.
_ANSWER_KINDS = (
    (re.compile(r"SSH-"), "an SSH server's greeting"),
    (re.compile(r"[\x14-\x17]\x03[\x00-\x04]"), "a TLS record (the server speaks HTTPS?)"),
    (re.compile(r"\x00\x00[\x00-\xff]\x04"), "an HTTP/2 frame"),
    (re.compile(r"PRI \* HTTP/2"), "an HTTP/2 preface"),
    (re.compile(r"HTTP/"), "a malformed HTTP status line"),
    (re.compile(r"220[ -]"), "an SMTP or FTP greeting"),
    (re.compile(r"\+OK|-ERR"), "a POP3 or Redis reply"),
    (re.compile(r"\* (OK|PREAUTH|BYE)"), "an IMAP greeting"),
    (re.compile(r"[+\-:$*][^\r\n]*$"), "a Redis-style reply"),
    (re.compile(r"<"), "markup (HTML or XML) without an HTTP head"),
    (re.compile(r"[{\[]"), "JSON without an HTTP head"),
)


def answer_kind(first_line: str) -> str:
    """The kind of answer a line that is not an HTTP status line is, in words; never its
    bytes (pure)."""
    if not first_line.strip():
        return "an empty line"
    for pattern, kind in _ANSWER_KINDS:
        if pattern.match(first_line):
            return kind
    printable = sum(32 <= ord(c) < 127 or c == "\t" for c in first_line)
    if printable < 0.9 * len(first_line):
        return "binary data"
    return "a line of text"


_TCP_INFO_SIZE = 60  # up to tcpi_last_ack_recv in struct tcp_info
_LAST_DATA_RECV_OFFSET = 52  # u32 tcpi_last_data_recv, milliseconds ago
_LAST_ACK_RECV_OFFSET = 56  # u32 tcpi_last_ack_recv, milliseconds ago

ClosedWith = Literal["fin", "reset"]


class ProbeError(Exception):
    """A failure worth one line in ``Measurement.error``."""


class TimedReader(asyncio.StreamReader):
    """A StreamReader that stamps when data and the close arrive (monotonic seconds)."""

    first_data_at: float | None = None
    last_data_at: float | None = None
    closed_at: float | None = None
    closed_with: ClosedWith | None = None

    tcp_socket: Any = None  # the connected socket, to ask the kernel when data arrived

    def feed_data(self, data: bytes) -> None:
        now = time.monotonic() - _kernel_age(self.tcp_socket, _LAST_DATA_RECV_OFFSET)
        if self.first_data_at is None:
            self.first_data_at = now
        self.last_data_at = now
        super().feed_data(data)

    def feed_eof(self) -> None:
        if self.closed_at is None:
            # The FIN is the last segment that acknowledged anything: its arrival time.
            fin_at = time.monotonic() - _kernel_age(self.tcp_socket, _LAST_ACK_RECV_OFFSET)
            self.closed_at, self.closed_with = max(fin_at, self.last_data_at or 0.0), "fin"
        super().feed_eof()

    def set_exception(self, exc: BaseException) -> None:
        if self.closed_at is None:
            self.closed_at, self.closed_with = time.monotonic(), "reset"
        super().set_exception(exc)


def _kernel_age(sock: Any, offset: int) -> float:
    """How long ago the kernel received the last data segment or ACK (Linux TCP_INFO), else 0.

    The event loop may read a socket well after the segment arrived when thousands of probes
    share it; the kernel's receive times keep the end of the response and the close exact.
    """
    if sock is None or _TCP_INFO is None:
        return 0.0
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, _TCP_INFO_SIZE)
    except OSError:
        return 0.0
    if len(info) < _TCP_INFO_SIZE:
        return 0.0
    age_ms = struct.unpack_from("I", info, offset)[0]
    return min(age_ms, 60_000) / 1000


@dataclass
class Response:
    status_code: int
    headers: list[tuple[str, str]]
    end_at: float  # monotonic time the last byte of the response arrived
    close_delimited: bool = False

    def values(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key == name]

    @property
    def connection_close(self) -> bool:
        tokens = ",".join(self.values("connection")).lower().split(",")
        return "close" in (token.strip() for token in tokens)

    @property
    def advertised_timeout_s(self) -> float | None:
        for value in self.values("keep-alive"):
            match = _KEEP_ALIVE_TIMEOUT.search(value)
            if match:
                return float(match.group(1))
        return None


class _Budget:
    """Bytes a part of the response may still take."""

    def __init__(self, limit: int, what: str) -> None:
        self.left, self.limit, self.what = limit, limit, what

    def spend(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise ProbeError(f"{self.what} larger than {_size(self.limit)}")


def _size(count: int) -> str:
    return f"{count // (1024 * 1024)} MiB" if count >= 1024 * 1024 else f"{count // 1024} KiB"


async def read_response(reader: TimedReader) -> Response:
    head = _Budget(MAX_HEAD_BYTES, "the response head")
    for _ in range(MAX_INTERIM_RESPONSES + 1):
        status_code, headers = await _read_head(reader, head)
        if not 100 <= status_code < 200 or status_code == 101:
            break  # skip interim responses such as 100 Continue
    else:
        raise ProbeError(f"more than {MAX_INTERIM_RESPONSES} interim (1xx) responses")
    response = Response(status_code, headers, end_at=reader.last_data_at or time.monotonic())
    encodings = ",".join(response.values("transfer-encoding")).lower()
    lengths = response.values("content-length")
    body = _Budget(MAX_BODY_BYTES, "the response body")
    if status_code in (101, 204, 304):
        pass
    elif encodings.strip():
        if encodings.split(",")[-1].strip() != "chunked":
            return await _read_until_close(reader, response, body)
        await _read_chunked(reader, head, body)
    elif lengths:
        text = lengths[0].split(",")[0].strip()
        if not _LENGTH.fullmatch(text):
            raise ProbeError("a Content-Length that is not one number")
        length = int(text)
        body.spend(length)
        await _skip(reader, length)
    else:
        return await _read_until_close(reader, response, body)
    response.end_at = reader.last_data_at or response.end_at
    return response


async def _read_head(reader: TimedReader, budget: _Budget) -> tuple[int, list[tuple[str, str]]]:
    line = await _read_line(reader, budget)
    match = _STATUS_LINE.match(line)
    if not match:
        raise ProbeError(f"not an HTTP response: {answer_kind(line)}")
    headers: list[tuple[str, str]] = []
    for _ in range(_MAX_HEADER_LINES):
        line = await _read_line(reader, budget)
        if not line:
            return int(match.group(1)), headers
        name, _, value = line.partition(":")
        headers.append((name.strip().lower(), value.strip()))
    raise ProbeError("too many response header lines")


async def _read_line(reader: TimedReader, budget: _Budget | None = None) -> str:
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        raise ProbeError("the server closed the connection mid-response") from exc
    except asyncio.LimitOverrunError as exc:
        raise ProbeError(f"response line longer than {_size(READ_SIZE)}") from exc
    if budget is not None:
        budget.spend(len(line))
    return line.decode("latin-1").rstrip("\r\n")


async def _read_chunked(reader: TimedReader, head: _Budget, body: _Budget) -> None:
    for _ in range(MAX_CHUNKS):
        size_line = await _read_line(reader, body)  # chunk framing counts as body
        text = size_line.split(";")[0].strip()
        if not _CHUNK_SIZE.fullmatch(text):
            raise ProbeError("a chunk size that is not a hexadecimal number")
        size = int(text, 16)
        if size == 0:
            while await _read_line(reader, head):
                pass  # trailers up to the blank line
            return
        body.spend(size)
        await _skip(reader, size)
        await _read_line(reader, body)
    raise ProbeError(f"more than {MAX_CHUNKS} chunks in the response body")


async def _skip(reader: TimedReader, length: int) -> None:
    while length > 0:
        chunk = await reader.read(min(length, READ_SIZE))
        if not chunk:
            raise ProbeError(f"the server closed the connection with {length} body bytes missing")
        length -= len(chunk)


async def _read_until_close(reader: TimedReader, response: Response, body: _Budget) -> Response:
    """A close-delimited body ends when the server closes: idle time zero by definition."""
    try:
        while chunk := await reader.read(READ_SIZE):
            body.spend(len(chunk))
    except CONNECTION_ERRORS:
        pass
    response.end_at = reader.closed_at or time.monotonic()
    response.close_delimited = True
    return response

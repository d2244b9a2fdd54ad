"""Reading one HTTP/1.1 response off an asyncio stream, with arrival times (adapter helper).

``TimedReader`` is an ``asyncio.StreamReader`` that stamps when response bytes and the close
arrive; on Linux it asks the kernel (``TCP_INFO``) when the segment came in, so a busy event
loop that reads the socket late does not skew the stamps. ``read_response`` reads the status
line, headers and the whole body (Content-Length, chunked, or delimited by the close) and
discards the body.
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
_MAX_HEADER_LINES = 200
_KEEP_ALIVE_TIMEOUT = re.compile(r"(?:^|[\s,;])timeout\s*=\s*\"?(\d+(?:\.\d+)?)", re.IGNORECASE)
_TCP_INFO = getattr(socket, "TCP_INFO", None)  # Linux
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


async def read_response(reader: TimedReader) -> Response:
    while True:
        status_code, headers = await _read_head(reader)
        if not 100 <= status_code < 200 or status_code == 101:
            break  # skip interim responses such as 100 Continue
    response = Response(status_code, headers, end_at=reader.last_data_at or time.monotonic())
    encodings = ",".join(response.values("transfer-encoding")).lower()
    lengths = response.values("content-length")
    if status_code in (101, 204, 304):
        pass
    elif encodings.strip():
        if encodings.split(",")[-1].strip() != "chunked":
            return await _read_until_close(reader, response)
        await _read_chunked(reader)
    elif lengths:
        try:
            length = int(lengths[0].split(",")[0].strip())
        except ValueError as exc:
            raise ProbeError(f"bad Content-Length: {lengths[0]!r}") from exc
        await _skip(reader, length)
    else:
        return await _read_until_close(reader, response)
    response.end_at = reader.last_data_at or response.end_at
    return response


async def _read_head(reader: TimedReader) -> tuple[int, list[tuple[str, str]]]:
    line = await _read_line(reader)
    match = re.match(r"HTTP/\d(?:\.\d)?\s+(\d{3})", line)
    if not match:
        raise ProbeError(f"not an HTTP response: {line[:80]!r}")
    headers: list[tuple[str, str]] = []
    for _ in range(_MAX_HEADER_LINES):
        line = await _read_line(reader)
        if not line:
            return int(match.group(1)), headers
        name, _, value = line.partition(":")
        headers.append((name.strip().lower(), value.strip()))
    raise ProbeError("too many response header lines")


async def _read_line(reader: TimedReader) -> str:
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        raise ProbeError("the server closed the connection mid-response") from exc
    except asyncio.LimitOverrunError as exc:
        raise ProbeError("response line too long") from exc
    return line.decode("latin-1").rstrip("\r\n")


async def _read_chunked(reader: TimedReader) -> None:
    while True:
        size_line = await _read_line(reader)
        try:
            size = int(size_line.split(";")[0].strip(), 16)
        except ValueError as exc:
            raise ProbeError(f"bad chunk size: {size_line[:40]!r}") from exc
        if size == 0:
            while await _read_line(reader):
                pass  # trailers up to the blank line
            return
        await _skip(reader, size)
        await _read_line(reader)


async def _skip(reader: TimedReader, length: int) -> None:
    while length > 0:
        chunk = await reader.read(min(length, READ_SIZE))
        if not chunk:
            raise ProbeError(f"the server closed the connection with {length} body bytes missing")
        length -= len(chunk)


async def _read_until_close(reader: TimedReader, response: Response) -> Response:
    """A close-delimited body ends when the server closes: idle time zero by definition."""
    try:
        while await reader.read(READ_SIZE):
            pass
    except CONNECTION_ERRORS:
        pass
    response.end_at = reader.closed_at or time.monotonic()
    response.close_delimited = True
    return response

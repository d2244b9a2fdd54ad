"""Small misbehaving HTTP servers (asyncio, 127.0.0.1) for the keep-alive probe's edge cases.

Each behaviour is a coroutine that gets the connection after the request head was read.
Start one with ``async with serve(behaviour) as port:`` inside the test's event loop, or several
in a process of their own with ``with serve_in_a_process(names) as ports:`` (``BY_NAME``), so
that what they do never waits on the test's loop, nor the test's on them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import ssl
import struct
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

Behaviour = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def response(status: str = "200 OK", body: bytes = b"hello\n", *headers: str) -> bytes:
    head = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


async def _until_client_goes(reader: asyncio.StreamReader) -> None:
    while await reader.read(4096):
        pass


def answers_then_closes(after_s: float, keep_alive: str | None = None) -> Behaviour:
    """A behaviour that answers (with ``Keep-Alive: <keep_alive>`` when given) and closes the
    idle connection ``after_s`` later."""
    headers = [f"Keep-Alive: {keep_alive}"] if keep_alive else []

    async def behaviour(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(response("200 OK", b"hello\n", *headers))
        await writer.drain()
        await asyncio.sleep(after_s)
        writer.close()

    return behaviour


#: Announces ``Keep-Alive: timeout=60`` but closes after 0.3 s.
lies_in_its_keep_alive_header = answers_then_closes(0.3, "timeout=60, max=100")
#: Announces ``Keep-Alive: timeout=1`` and closes after one second (the header counts in whole
#: seconds, so a promise kept takes one).
keeps_its_keep_alive_promise = answers_then_closes(1.0, "timeout=1")
#: A plain answer, the idle connection closed after 0.2 s: for tests of anything but the timeout.
closes_soon = answers_then_closes(0.2)


async def sends_chunked_then_closes(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """A chunked body in pieces, then FIN at once (without announcing Connection: close)."""
    writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    for piece in (b"hello ", b"chunked ", b"world\n"):
        writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        await writer.drain()
        await asyncio.sleep(0.05)
    writer.write(b"0\r\nX-Trailer: yes\r\n\r\n")
    await writer.drain()
    writer.close()


async def ends_the_body_by_closing(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """HTTP/1.0-style body without length: the close ends the body."""
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the close\n")
    await writer.drain()
    await asyncio.sleep(0.2)
    writer.write(b"more body\n")
    await writer.drain()
    writer.close()


async def resets_instead_of_fin(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answers, then after half a second closes with SO_LINGER 0: an RST, not a FIN."""
    writer.write(response())
    await writer.drain()
    await asyncio.sleep(0.5)
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def never_closes(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answers and keeps the connection open until the client goes."""
    writer.write(response())
    await writer.drain()
    await _until_client_goes(reader)


async def stalls_mid_body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Promises 1000 bytes, sends 10, then says nothing more."""
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789")
    await writer.drain()
    await _until_client_goes(reader)


async def answers_503(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Service Unavailable, keeping the connection for 0.2 s."""
    writer.write(response("503 Service Unavailable", b"down\n", "Retry-After: 30"))
    await writer.drain()
    await asyncio.sleep(0.2)
    writer.close()


async def says_continue_first(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A 100 Continue interim response before the real one; closes after 0.2 s."""
    writer.write(b"HTTP/1.1 100 Continue\r\n\r\n" + response("204 No Content", b""))
    await writer.drain()
    await asyncio.sleep(0.2)
    writer.close()


# --- hostile servers: each must end in one error result, quickly, whatever it sends ----------


async def _forever(writer: asyncio.StreamWriter, piece: bytes, pause_s: float = 0.0) -> None:
    while True:
        writer.write(piece)
        await writer.drain()
        if pause_s:
            await asyncio.sleep(pause_s)


async def sends_endless_headers(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A status line, then header lines that never end."""
    writer.write(b"HTTP/1.1 200 OK\r\n")
    await _forever(writer, b"X-Filler: " + b"a" * 1000 + b"\r\n")


async def sends_a_huge_status_line(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """A status line that never ends."""
    writer.write(b"HTTP/1.1 200 ")
    await _forever(writer, b"O" * 65536)


async def sends_bytes_that_are_not_text(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Every byte value, NULs and invalid UTF-8 included, in the status line and headers."""
    noise = bytes(range(256)).replace(b"\n", b"")
    writer.write(b"HTTP/1.1 200 \xff\xfe\x00OK\r\n" + noise + b": " + noise + b"\r\n")
    writer.write(b"Content-Length: 4\r\n\r\n\x00\xff\xfe\x80")
    await writer.drain()
    await asyncio.sleep(0.5)


async def trickles(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Slowloris: one byte of a never-ending header every 50 ms."""
    writer.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
    await _forever(writer, b"z", pause_s=0.05)


async def sends_endless_interim_responses(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """100 Continue, again and again, never the real response."""
    await _forever(writer, b"HTTP/1.1 100 Continue\r\n\r\n")


async def sends_endless_chunks(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A chunked body of one-byte chunks that never ends."""
    writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    await _forever(writer, b"1\r\nx\r\n" * 4096)


async def floods_after_the_response(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """A proper response, then bytes without end on the idle connection."""
    writer.write(response())
    await _forever(writer, b"\x00" * 65536)


async def promises_a_timeout_of_400_digits(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """``Keep-Alive: timeout=999…`` (a float of it is infinite), closes after 0.2 s."""
    writer.write(response("200 OK", b"ok\n", "Keep-Alive: timeout=" + "9" * 400))
    await writer.drain()
    await asyncio.sleep(0.2)


async def sends_a_negative_content_length(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """``Content-Length: -5``."""
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\nhello")
    await writer.drain()
    await _until_client_goes(reader)


async def sends_a_body_without_end(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """No length: the body ends at the close, which never comes."""
    writer.write(b"HTTP/1.1 200 OK\r\n\r\n")
    await _forever(writer, b"y" * 65536)


HOSTILE: dict[str, Behaviour] = {
    "endless headers": sends_endless_headers,
    "huge status line": sends_a_huge_status_line,
    "bytes that are not text": sends_bytes_that_are_not_text,
    "slowloris trickle": trickles,
    "endless 100 Continue": sends_endless_interim_responses,
    "endless chunks": sends_endless_chunks,
    "flood after the response": floods_after_the_response,
    "400-digit keep-alive timeout": promises_a_timeout_of_400_digits,
    "negative Content-Length": sends_a_negative_content_length,
    "body without end": sends_a_body_without_end,
}


@asynccontextmanager
async def serve(
    behaviour: Behaviour,
    *,
    heads: list[bytes] | None = None,
    tls: ssl.SSLContext | None = None,
) -> AsyncIterator[int]:
    """Serve ``behaviour`` on a free 127.0.0.1 port; yields the port.

    ``heads`` collects each request head as received; with ``tls`` the server speaks TLS.
    """

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            if heads is not None:
                heads.append(head)
            await behaviour(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        except asyncio.CancelledError:
            pass  # the test's loop ends while a hostile server still sends
        finally:
            writer.transport.abort()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=tls)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()


#: What ``serve_in_a_process`` can serve, by name.
BY_NAME: dict[str, Behaviour] = {
    **HOSTILE,
    "closes soon": closes_soon,
}


@contextmanager
def serve_in_a_process(names: list[str]) -> Iterator[dict[str, int]]:
    """Serve each behaviour named (``BY_NAME``) from a child process with its own event loop;
    yields ``{name: port}``. The hostile ones send megabytes as fast as they can: in the test's
    own loop they would delay its timers, and a well-behaved server's close with them
    (by seconds, on a loaded machine), which is not what the probe measures."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.services.edge_servers", *names],
        cwd=Path(__file__).resolve().parents[2],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        line = child.stdout.readline()
        if not line:
            raise RuntimeError(f"the edge servers' process ended with {child.wait(10)}")
        yield json.loads(line)
    finally:
        if child.stdin is not None:
            child.stdin.close()  # its cue to go
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


async def _serve_until_stdin_closes(names: list[str]) -> None:
    async with contextlib.AsyncExitStack() as stack:
        ports = {name: await stack.enter_async_context(serve(BY_NAME[name])) for name in names}
        print(json.dumps(ports), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.buffer.read)


if __name__ == "__main__":
    asyncio.run(_serve_until_stdin_closes(sys.argv[1:]))

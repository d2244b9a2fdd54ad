"""Small misbehaving HTTP servers (asyncio, 127.0.0.1) for the keep-alive probe's edge cases.

Each behaviour is a coroutine that gets the connection after the request head was read.
Start one with ``async with serve(behaviour) as port:`` inside the test's event loop.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

Behaviour = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def response(status: str = "200 OK", body: bytes = b"hello\n", *headers: str) -> bytes:
    head = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


async def _until_client_goes(reader: asyncio.StreamReader) -> None:
    while await reader.read(4096):
        pass


async def lies_in_its_keep_alive_header(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Announces ``Keep-Alive: timeout=60`` but closes after one second."""
    writer.write(response("200 OK", b"hello\n", "Keep-Alive: timeout=60, max=100"))
    await writer.drain()
    await asyncio.sleep(1.0)
    writer.close()


async def keeps_its_keep_alive_promise(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Announces ``Keep-Alive: timeout=1`` and closes after one second."""
    writer.write(response("200 OK", b"hello\n", "Keep-Alive: timeout=1"))
    await writer.drain()
    await asyncio.sleep(1.0)
    writer.close()


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
    """Service Unavailable, keeping the connection for one second."""
    writer.write(response("503 Service Unavailable", b"down\n", "Retry-After: 30"))
    await writer.drain()
    await asyncio.sleep(1.0)
    writer.close()


async def says_continue_first(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A 100 Continue interim response before the real one; closes after one second."""
    writer.write(b"HTTP/1.1 100 Continue\r\n\r\n" + response("204 No Content", b""))
    await writer.drain()
    await asyncio.sleep(1.0)
    writer.close()


@asynccontextmanager
async def serve(behaviour: Behaviour) -> AsyncIterator[int]:
    """Serve ``behaviour`` on a free 127.0.0.1 port; yields the port."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            await behaviour(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.transport.abort()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()

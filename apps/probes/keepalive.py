"""Measure how long an HTTP server keeps an idle keep-alive connection open.

Adapter (network I/O, asyncio streams only, no thread per probe): resolve the host, open TCP
(then TLS with SNI), send one ``GET`` with ``Connection: keep-alive``, read the response, then
wait idle until the server closes the connection or the cap is reached. The result is a frozen
``Measurement``; failures never raise, they are its ``error``, so a batch (``measure_many``)
always yields one result per probe. What goes on the wire is the URL's browser form
(``wire.to_wire``); the server is not trusted (``parse_http1``, ``MAX_AFTER_RESPONSE``); the
end of the response and the close are stamped with the kernel's receive time
(``parse_http1.TimedReader``), so thousands of probes at once measure as exactly as one.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import logging
import os
import socket
import ssl
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from apps.lib import outbound
from apps.probes.parse_http1 import (
    CONNECTION_ERRORS,
    READ_SIZE,
    ClosedWith,
    ProbeError,
    Response,
    TimedReader,
    read_response,
)
from apps.probes.wire import BadURL, to_wire

log = logging.getLogger(__name__)

DEFAULT_CAP_S = 1200.0
IMMEDIATE_S = 0.1  # a close within this long after the response counts as "right after"
MATCH_TOLERANCE_S = 1.0  # Keep-Alive: timeout=N is whole seconds
MAX_AFTER_RESPONSE = 64 * 1024  # bytes a server may send while the connection is idle

ClosedBy = Literal["server", "cap"]


@dataclass(frozen=True)
class Measurement:
    """One keep-alive probe. Phase times are durations in seconds, None when not reached.

    ``first_byte_s`` runs from the request being sent to the first response byte;
    ``total_s`` from the start of the probe to the end of the (last) response.
    ``idle_timeout_s`` is the close time minus the end of the response, None when the cap
    was reached or the probe failed.
    """

    url: str
    started_at: datetime
    peer_address: str | None = None
    status_code: int | None = None
    idle_timeout_s: float | None = None
    closed_by: ClosedBy | None = None
    closed_with: ClosedWith | None = None
    closed_right_after_response: bool = False
    connection_close_announced: bool = False
    advertised_timeout_s: float | None = None
    advertised_timeout_matched: bool | None = None
    reuse_confirmed: bool | None = None
    cap_s: float = DEFAULT_CAP_S
    dns_s: float | None = None
    connect_s: float | None = None
    tls_s: float | None = None
    first_byte_s: float | None = None
    total_s: float | None = None
    tls_expires: datetime | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_json(self) -> dict[str, Any]:
        """A JSON-ready dict (datetimes as ISO 8601 strings)."""
        data = asdict(self)
        for key in ("started_at", "tls_expires"):
            if data[key] is not None:
                data[key] = data[key].isoformat()
        for key, value in data.items():
            if isinstance(value, float):
                data[key] = round(value, 6)
        return data


@dataclass(frozen=True)
class ProbeSpec:
    """One probe for ``measure_many``; ``tag`` is handed back untouched (e.g. a target id)."""

    url: str
    cap_s: float = DEFAULT_CAP_S
    timeout_s: float = 10.0
    server_name: str | None = None
    verify_tls: bool = True
    tag: Any = None
    policy: outbound.Policy | None = None  # the outbound guard's; None: no guard (a person's CLI)


@dataclass
class _Probe:
    """Mutable scratchpad while a probe runs; frozen into a Measurement at the end."""

    url: str
    cap_s: float
    started: float = field(default_factory=time.monotonic)
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    values: dict[str, Any] = field(default_factory=dict)

    def phase(self, name: str, since: float) -> float:
        now = time.monotonic()
        self.values[name] = now - since
        return now

    def result(self, error: str | None = None) -> Measurement:
        return Measurement(
            url=self.url, started_at=self.started_at, cap_s=self.cap_s, error=error, **self.values
        )


async def measure(
    url: str,
    *,
    cap_s: float = DEFAULT_CAP_S,
    timeout_s: float = 10.0,
    server_name: str | None = None,
    verify_tls: bool = True,
    ssl_context: ssl.SSLContext | None = None,
    confirm_reuse_after_s: float | None = None,
    path: str | None = None,
    policy: outbound.Policy | None = None,
) -> Measurement:
    """Probe ``url`` once and return what was seen; never raises for network failures.

    ``server_name`` replaces the URL's host in SNI, certificate check and ``Host`` header
    (connect to an address, ask for a name). ``timeout_s`` bounds connection setup and,
    separately, reading the response. ``cap_s`` bounds the idle wait after the response.
    With ``confirm_reuse_after_s``, a second request is sent on the same connection after
    that many idle seconds (if it is still open); it resets the server's idle timer, so the
    idle time is then measured from the end of the second response. With ``policy``, every
    address the host resolves to is judged by the outbound guard before connecting.
    """
    probe = _Probe(url=url, cap_s=cap_s)
    writer: asyncio.StreamWriter | None = None
    try:
        target = _Target.parse(url, server_name=server_name, path=path)
        reader, writer = await _open(probe, target, timeout_s, verify_tls, ssl_context, policy)
        response = await _exchange(probe, reader, writer, target, timeout_s)
        if confirm_reuse_after_s is not None and not _closing(reader, response):
            response = await _confirm_reuse(
                probe, reader, writer, target, timeout_s, confirm_reuse_after_s, response
            )
        await _wait_idle(probe, reader, response, cap_s)
        return probe.result()
    except ProbeError as exc:
        return probe.result(str(exc))
    except TimeoutError:
        return probe.result(f"timed out after {timeout_s:g} s")
    except ssl.SSLCertVerificationError as exc:
        return probe.result(f"TLS failure: {exc.verify_message or exc.reason}")
    except ssl.SSLError as exc:
        return probe.result(f"TLS failure: {exc.reason or exc}")
    except CONNECTION_ERRORS as exc:
        return probe.result(f"connection failed: {_describe(exc)}")
    except Exception as exc:  # whatever else a URL or a server provokes is this probe's error
        log.exception("Probe of %s failed unexpectedly", url)
        return probe.result(f"probe failed: {type(exc).__name__}: {_describe(exc)}")
    finally:
        if writer is not None:
            writer.transport.abort()


async def measure_many(
    probes: Iterable[str | ProbeSpec], limit: int = 100
) -> AsyncIterator[tuple[ProbeSpec, Measurement]]:
    """Run probes concurrently (at most ``limit`` at a time), yielding each as it finishes.

    Every probe yields exactly one result: whatever one raises becomes its error result, so
    a failure never holds the batch, and each result is yielded as soon as that probe ends.
    """
    semaphore = asyncio.Semaphore(limit)
    done: asyncio.Queue[tuple[ProbeSpec, Measurement]] = asyncio.Queue()

    async def run(spec: ProbeSpec) -> None:
        try:
            async with semaphore:
                result = await measure(
                    spec.url,
                    cap_s=spec.cap_s,
                    timeout_s=spec.timeout_s,
                    server_name=spec.server_name,
                    verify_tls=spec.verify_tls,
                    policy=spec.policy,
                )
        except Exception as exc:  # measure() catches everything; this is the last guard
            log.exception("Probe of %s failed unexpectedly", spec.url)
            error = f"probe failed: {type(exc).__name__}: {_describe(exc)}"
            result = Measurement(
                url=spec.url, started_at=datetime.now(UTC), cap_s=spec.cap_s, error=error
            )
        done.put_nowait((spec, result))

    specs = [p if isinstance(p, ProbeSpec) else ProbeSpec(url=p) for p in probes]
    tasks = [asyncio.create_task(run(spec)) for spec in specs]
    try:
        for _ in tasks:
            yield await done.get()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


@dataclass(frozen=True)
class _Target:
    """The network form of a probe's URL (``wire.to_wire``): ASCII host, encoded path."""

    scheme: str
    host: str  # ASCII (A-labels) or an IP address: what DNS is asked
    port: int
    name: str  # ASCII, for SNI and the Host header
    path: str  # the percent-encoded request target
    host_header: str

    @classmethod
    def parse(cls, url: str, *, server_name: str | None, path: str | None) -> _Target:
        try:
            wire = to_wire(url, server_name=server_name, path=path)
        except BadURL as exc:
            raise ProbeError(str(exc)) from None
        return cls(
            wire.scheme, wire.host, wire.port, wire.server_name, wire.target, wire.host_header
        )

    def request(self) -> bytes:
        return (
            f"GET {self.path} HTTP/1.1\r\nHost: {self.host_header}\r\n"
            "User-Agent: vigil-keepalive-probe\r\nAccept: */*\r\n"
            "Connection: keep-alive\r\n\r\n"
        ).encode("ascii")


async def _open(
    probe: _Probe,
    target: _Target,
    timeout_s: float,
    verify_tls: bool,
    ssl_context: ssl.SSLContext | None,
    policy: outbound.Policy | None = None,
) -> tuple[TimedReader, asyncio.StreamWriter]:
    try:
        async with asyncio.timeout(timeout_s):
            return await _open_within(probe, target, verify_tls, ssl_context, policy)
    except TimeoutError:
        raise ProbeError(f"timed out connecting after {timeout_s:g} s") from None


async def _open_within(
    probe: _Probe,
    target: _Target,
    verify_tls: bool,
    ssl_context: ssl.SSLContext | None,
    policy: outbound.Policy | None = None,
) -> tuple[TimedReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    mark = probe.started
    try:
        infos = _literal_address(target) or await loop.getaddrinfo(
            target.host, target.port, type=socket.SOCK_STREAM
        )
    except socket.gaierror as exc:
        raise ProbeError(f"DNS failure: {target.host}: {exc.strerror or exc}") from exc
    if policy is not None:  # connect only to addresses the guard accepts: no second lookup
        try:
            outbound.judge_infos(target.host, infos, policy)
        except outbound.OutboundRefused as refused:
            raise ProbeError(str(refused)) from None
    mark = probe.phase("dns_s", mark)
    reader = TimedReader(limit=READ_SIZE, loop=loop)
    protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
    errors = []
    for family, type_, proto, _, address in infos:
        try:
            transport, _ = await loop.create_connection(
                lambda: protocol, sock=await _connect(loop, family, type_, proto, address)
            )
            break
        except OSError as exc:
            errors.append(exc)
    else:
        raise ProbeError(f"unreachable: {target.host}:{target.port}: {_describe(errors[-1])}")
    mark = probe.phase("connect_s", mark)
    reader.tcp_socket = transport.get_extra_info("socket")
    probe.values["peer_address"] = str(transport.get_extra_info("peername")[0])
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    if target.scheme == "https":
        context = ssl_context or _tls_context(verify_tls)
        try:
            await writer.start_tls(context, server_hostname=target.name)
        except BaseException:
            transport.abort()
            raise
        probe.phase("tls_s", mark)
        probe.values["tls_expires"] = _certificate_expiry(writer.get_extra_info("ssl_object"))
    return reader, writer


def _literal_address(target: _Target) -> list[tuple[Any, ...]] | None:
    """An IP address in the URL needs no resolver (and no executor thread)."""
    try:
        address = ipaddress.ip_address(target.host)
    except ValueError:
        return None
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (target.host, target.port))]


async def _connect(
    loop: asyncio.AbstractEventLoop, family: int, type_: int, proto: int, address: Any
) -> socket.socket:
    sock = socket.socket(family, type_, proto)
    try:
        sock.setblocking(False)
        await loop.sock_connect(sock, address)
    except BaseException:
        sock.close()
        raise
    return sock


async def _exchange(
    probe: _Probe,
    reader: TimedReader,
    writer: asyncio.StreamWriter,
    target: _Target,
    timeout_s: float,
) -> Response:
    """Send one request and read its whole response."""
    reader.first_data_at = None
    writer.write(target.request())
    sent = time.monotonic()
    try:
        async with asyncio.timeout(timeout_s):
            await writer.drain()
            response = await read_response(reader)
    except TimeoutError:
        raise ProbeError(f"timed out reading the response after {timeout_s:g} s") from None
    # Kernel receive times are jiffies (a few ms): keep them from preceding the request.
    response.end_at = max(response.end_at, sent)
    probe.values["first_byte_s"] = max(0.0, (reader.first_data_at or response.end_at) - sent)
    probe.values["total_s"] = response.end_at - probe.started
    probe.values["status_code"] = response.status_code
    probe.values["connection_close_announced"] = response.connection_close
    probe.values["advertised_timeout_s"] = response.advertised_timeout_s
    return response


async def _confirm_reuse(
    probe: _Probe,
    reader: TimedReader,
    writer: asyncio.StreamWriter,
    target: _Target,
    timeout_s: float,
    after_s: float,
    first: Response,
) -> Response:
    """Send a second request after ``after_s`` idle seconds if the connection is still open."""
    await asyncio.sleep(max(0.0, first.end_at + after_s - time.monotonic()))
    if reader.closed_at is not None or reader.at_eof():
        probe.values["reuse_confirmed"] = False
        return first
    try:
        second = await _exchange(probe, reader, writer, target, timeout_s)
    except (*CONNECTION_ERRORS, TimeoutError, ProbeError):
        probe.values["reuse_confirmed"] = False
        raise ProbeError("the server did not answer a second request on the connection") from None
    probe.values["reuse_confirmed"] = True
    return second


def _closing(reader: TimedReader, response: Response) -> bool:
    return response.close_delimited or response.connection_close or reader.closed_at is not None


async def _wait_idle(probe: _Probe, reader: TimedReader, response: Response, cap_s: float) -> None:
    """Wait until the server closes (EOF or reset) or ``cap_s`` after the response."""
    remaining = response.end_at + cap_s - time.monotonic()
    after = 0
    try:
        async with asyncio.timeout(max(remaining, 0.0)):
            while chunk := await reader.read(READ_SIZE):
                after += len(chunk)  # bytes after the response (e.g. a 408) do not end the
                if after > MAX_AFTER_RESPONSE:  # wait; a stream of them does
                    raise ProbeError(
                        f"the server sent more than {MAX_AFTER_RESPONSE // 1024} KiB "
                        "after the response"
                    )
    except TimeoutError:
        if reader.closed_at is None:
            probe.values["closed_by"] = "cap"
            return
    except CONNECTION_ERRORS:
        pass  # a reset: stamped by the reader
    closed_at = reader.closed_at if reader.closed_at is not None else time.monotonic()
    idle = max(0.0, closed_at - response.end_at)
    advertised = probe.values.get("advertised_timeout_s")
    probe.values.update(
        closed_by="server",
        closed_with=reader.closed_with or "fin",
        idle_timeout_s=idle,
        closed_right_after_response=idle < IMMEDIATE_S,
        advertised_timeout_matched=(
            None if advertised is None else abs(idle - advertised) <= MATCH_TOLERANCE_S
        ),
    )


@functools.cache
def _tls_context(verify: bool) -> ssl.SSLContext:
    """One shared context per mode: loading the CA store per probe would cost memory and time."""
    context = ssl.create_default_context()
    if not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def _certificate_expiry(ssl_object: ssl.SSLObject | None) -> datetime | None:
    """notAfter of the peer certificate, also when it was not verified."""
    der = ssl_object.getpeercert(binary_form=True) if ssl_object else None
    if not der:
        return None
    from cryptography import x509  # loaded by the first TLS probe, not at every start

    try:
        return x509.load_der_x509_certificate(der).not_valid_after_utc
    except ValueError:
        return None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno:
        return os.strerror(exc.errno)
    return str(exc) or type(exc).__name__

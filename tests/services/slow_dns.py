"""A real DNS server on loopback that answers the reverse zone slowly, as the outage's did.

Debian's dnsmasq answers (``--host-record``: the A record and its PTR); dnsmasq cannot delay an
answer, so a small UDP proxy in front of it holds every PTR answer for ``delay`` seconds and
passes the others at once. The proxy listens on port 53 of an address of its own in 127/8
(``/etc/resolv.conf`` names no port): the system resolver of a process given a resolv.conf
naming it (tests/efs/test_agent.py's private mount namespace) asks it like any DNS server.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

PTR = 12


def _free_udp_port() -> int:
    """A port of 127.0.0.1 free for UDP and TCP at once (dnsmasq binds both): another process
    may still take it before dnsmasq does, which ``slow_reverse_dns`` retries."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t:
                try:
                    t.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port


def qtype(packet: bytes) -> int | None:
    """The type of a DNS query's first question (RFC 1035 4.1.2), None if unreadable."""
    at = 12
    while at < len(packet):
        length = packet[at]
        if length == 0:
            at += 1
            break
        if length & 0xC0:  # a pointer (not in a query's first name, but bounded anyway)
            at += 2
            break
        at += 1 + length
    if at + 2 > len(packet):
        return None
    return int.from_bytes(packet[at : at + 2], "big")


class SlowReverseProxy:
    def __init__(self, listen: str, upstream: tuple[str, int], delay: float) -> None:
        self.upstream, self.delay = upstream, delay
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((listen, 53))
        self.sock.settimeout(0.2)
        self.address = listen
        self.stopping = threading.Event()
        self.ptr_queries = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                packet, client = self.sock.recvfrom(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._answer, args=(packet, client), daemon=True).start()

    def _answer(self, packet: bytes, client: tuple[str, int]) -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as up:
            up.settimeout(5)
            up.sendto(packet, self.upstream)
            try:
                answer, _ = up.recvfrom(4096)
            except TimeoutError:
                return
        if qtype(packet) == PTR:
            self.ptr_queries += 1
            time.sleep(self.delay)
        with contextlib.suppress(OSError):
            self.sock.sendto(answer, client)

    def close(self) -> None:
        self.stopping.set()
        self.sock.close()
        self.thread.join(timeout=2)


def _dnsmasq(records: dict[str, str], tmp: Path) -> tuple[subprocess.Popen, int]:
    """dnsmasq answering ``records`` on a port of 127.0.0.1, once it answers: the process and
    the port (a port taken between the choice and the bind is chosen again, three times)."""
    dnsmasq = shutil.which("dnsmasq") or "/usr/sbin/dnsmasq"
    if not Path(dnsmasq).exists():
        raise RuntimeError("dnsmasq is in requirements/apt.txt (dnsmasq-base)")
    for attempt in range(3):
        port = _free_udp_port()
        command = [
            dnsmasq,
            "--keep-in-foreground",
            "--no-resolv",
            "--no-hosts",
            "--no-poll",
            f"--pid-file={tmp / 'dnsmasq.pid'}",
            "--listen-address=127.0.0.1",
            "--bind-interfaces",
            f"--port={port}",
            "--user=root",
            "--log-facility=-",
            *(f"--host-record={name},{address}" for name, address in records.items()),
        ]
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(50):  # until dnsmasq answers
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                probe.settimeout(0.1)
                probe.sendto(
                    b"\x00\x01\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x01",
                    ("127.0.0.1", port),
                )
                try:
                    probe.recvfrom(512)
                    return server, port
                except (TimeoutError, ConnectionRefusedError):
                    if server.poll() is not None:
                        break
        error = server.stderr.read().decode() if server.poll() is not None else "no answer"
        if server.poll() is None:
            server.terminate()
            server.wait(timeout=10)
        if "in use" not in error or attempt == 2:
            raise RuntimeError(f"dnsmasq did not start: {error}")
    raise AssertionError("unreachable")


@contextlib.contextmanager
def slow_reverse_dns(
    records: dict[str, str], delay: float, tmp: Path
) -> Iterator[SlowReverseProxy]:
    """dnsmasq answering ``records`` (name -> IPv4 address, forward and reverse) behind a proxy
    that delays PTR answers by ``delay`` seconds; yields the proxy (its ``address`` on port 53)."""
    server, port = _dnsmasq(records, tmp)
    proxy = None
    try:
        listen = f"127.53.{random.randint(1, 254)}.{random.randint(1, 254)}"
        proxy = SlowReverseProxy(listen, ("127.0.0.1", port), delay)
        yield proxy
    finally:
        if proxy is not None:
            proxy.close()
        server.terminate()
        server.wait(timeout=10)

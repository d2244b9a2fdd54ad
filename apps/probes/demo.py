"""Demo mode: small keep-alive servers on loopback, and targets that probe them (in the demo
AWS region, one on the demo site outside AWS).

``make run`` starts ``DemoServers`` in its own process (config/run.py), next to the AWS
stand-in: an asyncio HTTP/1.1 server per behaviour, each closing idle connections after its
own timeout, one of them changing its timeout every few minutes (drift). ``set_up()`` adds the
site and its targets; no demo probe leaves the machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from dataclasses import dataclass

from apps.regions.demo import OUTSIDE_SITE_NAME, demo_region, demo_site

from .models import Target

DEMO_SITE_CODE = "demo-site"  # apps.regions.demo.OUTSIDE_SITE_CODE

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Behaviour:
    """A demo server: how long it keeps idle connections, and what the demo target expects."""

    name: str
    keepalive_s: float
    expected: tuple[float, float]
    drift_to_s: float | None = None  # alternate with this timeout every ``drift_every_s``
    drift_every_s: float = 600.0
    status: str = "200 OK"
    outside_aws: bool = False  # probed from the demo site rather than the demo region

    def keepalive_now(self, now: float | None = None) -> float:
        if self.drift_to_s is None:
            return self.keepalive_s
        window = int((time.time() if now is None else now) // self.drift_every_s)
        return self.drift_to_s if window % 2 else self.keepalive_s


BEHAVIOURS = (
    Behaviour("Demo: web front end (nginx-like, 5 s)", 5.0, expected=(4, 6)),
    Behaviour(
        "Demo: API behind a load balancer (15 s, LB expects 60-75 s)", 15.0, expected=(60, 75)
    ),
    Behaviour("Demo: backend pool (65 s)", 65.0, expected=(60, 75)),
    Behaviour(
        "Demo: drifting proxy (20 s / 35 s)",
        20.0,
        expected=(15, 40),
        drift_to_s=35.0,
        outside_aws=True,
    ),
)


class DemoServers:
    """Serve each behaviour on ``host:base_port + i`` from an event loop on a daemon thread."""

    def __init__(
        self,
        behaviours: tuple[Behaviour, ...] = BEHAVIOURS,
        host: str = "127.0.0.1",
        base_port: int = 0,
    ) -> None:
        self.behaviours = behaviours
        self.host = host
        self.base_port = base_port
        self.ports: list[int | None] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._servers: list[asyncio.Server] = []

    def urls(self) -> list[str | None]:
        return [None if port is None else f"http://{self.host}:{port}/" for port in self.ports]

    def start(self) -> list[str | None]:
        """Listen on every port (a busy one is logged and left out); return the URLs."""
        started = threading.Event()
        self._loop = asyncio.new_event_loop()

        async def listen() -> None:
            for i, behaviour in enumerate(self.behaviours):
                port = self.base_port + i if self.base_port else 0
                try:
                    server = await asyncio.start_server(
                        lambda r, w, b=behaviour: self._handle(b, r, w), self.host, port
                    )
                except OSError as exc:
                    log.warning("Demo keep-alive server %r not started: %s", behaviour.name, exc)
                    self.ports.append(None)
                    continue
                self._servers.append(server)
                self.ports.append(server.sockets[0].getsockname()[1])

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(listen())
            started.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="demo-keepalive", daemon=True)
        self._thread.start()
        started.wait(10)
        return self.urls()

    def stop(self) -> None:
        if self._loop is None or self._thread is None:
            return

        async def close() -> None:
            for server in self._servers:
                server.close()
            for task in asyncio.all_tasks() - {asyncio.current_task()}:
                task.cancel()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()
        self._loop = self._thread = None

    def __enter__(self) -> list[str | None]:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @staticmethod
    async def _handle(
        behaviour: Behaviour, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Answer requests on the connection until it has been idle for the timeout."""
        try:
            while True:
                timeout = behaviour.keepalive_now()
                try:
                    async with asyncio.timeout(timeout):
                        head = await reader.readuntil(b"\r\n\r\n")
                except TimeoutError:
                    return  # idle too long: close with a FIN, as nginx does
                body = f"{behaviour.name}: keep-alive {timeout:g} s\n".encode()
                writer.write(
                    f"HTTP/1.1 {behaviour.status}\r\nContent-Type: text/plain\r\n"
                    f"Content-Length: {len(body)}\r\nConnection: keep-alive\r\n\r\n".encode()
                    + (b"" if head.startswith(b"HEAD ") else body)
                )
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            return
        finally:
            with contextlib.suppress(Exception):
                writer.close()


def set_up(base_port: int | None = None) -> None:
    """One enabled target per demo server, in the demo region but one on the demo site
    (idempotent)."""
    from django.conf import settings

    port = settings.VIGIL_DEMO_PROBES_PORT if base_port is None else base_port
    site = demo_site(DEMO_SITE_CODE, OUTSIDE_SITE_NAME)
    region = demo_region()
    for i, behaviour in enumerate(BEHAVIOURS):
        low, high = behaviour.expected
        Target.objects.update_or_create(
            region__account__is_demo=True,
            name=behaviour.name,
            defaults={
                "region": site if behaviour.outside_aws else region,
                "url": f"http://127.0.0.1:{port + i}/",
                "expected_min_s": low,
                "expected_max_s": high,
                "interval_s": 120,
                "cap_s": 120.0,
                "timeout_s": 5.0,
                "verify_tls": True,
                "enabled": True,
            },
        )


def running_servers() -> DemoServers:
    """The demo servers on ``VIGIL_DEMO_PROBES_PORT`` and up, as ``make run`` holds them open."""
    from django.conf import settings

    return DemoServers(base_port=settings.VIGIL_DEMO_PROBES_PORT)

"""A loopback HTTP receiver of the test's own: webhooks, Slack and PagerDuty land here.

``Receiver.answers`` is what the next requests get: a status (``500``), ``"hang"`` (answer
nothing until the caller gives up), or ``("redirect", url)``; then 200 (202 with
``accepted=202``). Every request is kept in ``requests`` with its headers and JSON body.
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.services import serve_in_a_thread


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float

    @property
    def json(self) -> dict:
        return json.loads(self.body)


class Receiver:
    def __init__(self, accepted: int = 200, tls: tuple[Path, Path] | None = None) -> None:
        """``tls``: (certificate, key) files to serve HTTPS; ``server_names`` keeps each
        handshake's SNI."""
        self.server_names: list[str | None] = []
        self.requests: list[Request] = []
        self.answers: list[object] = []
        self.accepted = accepted
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver._lock:
                    answer = receiver.answers.pop(0) if receiver.answers else receiver.accepted
                    receiver.requests.append(
                        Request(self.path, dict(self.headers.items()), body, time.monotonic())
                    )
                if answer == "hang":
                    time.sleep(5)
                    self.close_connection = True
                    return
                headers = {"Content-Type": "application/json"}
                if isinstance(answer, tuple):
                    answer, headers["Location"] = 302, answer[1]
                payload = b'{"status":"success"}' if answer < 300 else b'{"error":"no"}'
                self.send_response(int(answer))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        if tls is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(*tls)

            def remember(sock: ssl.SSLObject, name: str | None, ctx: ssl.SSLContext) -> None:
                receiver.server_names.append(name)

            context.sni_callback = remember
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            self.url = f"https://127.0.0.1:{self.server.server_port}"
        serve_in_a_thread(self.server)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

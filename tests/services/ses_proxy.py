"""A loopback proxy in front of moto's SES that fails on demand, as real SES sometimes does.

moto cannot return throttling or server errors by itself. ``SesFaultProxy.faults`` is a list
of what the next send calls get: "throttle" (429 TooManyRequestsException), "error500",
"reject" (400 MessageRejected), "illegal" (400 BadRequestException:
Illegal address, an address SES refuses), "" (passed on), "delay:SECONDS" (then forwarded), or "hang": hold the call
until the caller goes away, then drop it (a worker killed before SES accepted its message).
Other calls pass through.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.services import serve_in_a_thread

ERRORS = {
    "throttle": (429, "TooManyRequestsException", "Maximum sending rate exceeded."),
    "error500": (500, "InternalFailure", "An internal error occurred."),
    "reject": (400, "MessageRejected", "Email address is not verified."),
    "illegal": (400, "BadRequestException", "Illegal address"),
}


def respond(
    handler: BaseHTTPRequestHandler,
    status: int,
    headers: Iterable[tuple[str, str]],
    payload: bytes,
) -> None:
    """Answer ``handler``'s request with ``payload`` and its length."""
    handler.send_response(status)
    for key, value in headers:
        handler.send_header(key, value)
    handler.send_header("Content-Length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)


def relay(
    handler: BaseHTTPRequestHandler, upstream: str, method: str, body: bytes | None, timeout: float
) -> None:
    """Pass ``handler``'s request on to ``upstream`` and its answer (errors too) back."""
    headers = {k: v for k, v in handler.headers.items() if k.lower() != "host"}
    request = urllib.request.Request(
        upstream + handler.path, data=body, headers=headers, method=method
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, data, answered = response.status, response.read(), response.headers
    except urllib.error.HTTPError as exc:
        status, data, answered = exc.code, exc.read(), exc.headers
    hop_by_hop = {"content-length", "transfer-encoding", "connection"}
    respond(
        handler, status, ((k, v) for k, v in answered.items() if k.lower() not in hop_by_hop), data
    )


class SesFaultProxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.faults: list[str] = []
        self.sends_seen = 0
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path.startswith("/v2/email/outbound-emails"):
                    with proxy._lock:
                        proxy.sends_seen += 1
                        fault = proxy.faults.pop(0) if proxy.faults else ""
                    if fault == "hang":
                        self._wait_for_hang_up()
                        return
                    if fault.startswith("delay:"):
                        time.sleep(float(fault.split(":")[1]))
                    elif fault:
                        status, code, message = ERRORS[fault]
                        payload = json.dumps({"message": message}).encode()
                        headers = {"x-amzn-ErrorType": code, "Content-Type": "application/json"}
                        respond(self, status, headers.items(), payload)
                        return
                relay(self, proxy.upstream, "POST", body, timeout=30)

            def _wait_for_hang_up(self) -> None:
                self.connection.settimeout(120)
                try:
                    while self.connection.recv(1024):
                        pass
                except OSError:
                    pass
                self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        serve_in_a_thread(self.server)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


SENDER = "vigil@example.com"


def verify_sender(endpoint: str) -> None:
    import boto3

    boto3.client("sesv2", "us-east-1", endpoint_url=endpoint).create_email_identity(
        EmailIdentity=SENDER
    )


def sent_messages() -> list[str]:
    """The raw messages moto's SES accepted, oldest first.

    The moto server runs in this process (``tests/plugins/aws.py``), so they are read from moto's
    registry of model instances: what ``/moto-api/data.json`` serialises, but for SES alone.
    data.json walks every tracked instance of every service, a test's CloudWatch data included,
    and took over 10 s in a full run.
    """
    # moto loads with the tests that read SES, not with every module that imports ``SENDER``
    from moto.core.model_instances import model_data

    return [m.raw_data for m in model_data["ses"]["RawMessage"].instances_tracked]

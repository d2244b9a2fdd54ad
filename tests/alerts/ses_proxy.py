"""A loopback proxy in front of moto's SES that fails on demand, as real SES sometimes does.

moto cannot return throttling or server errors by itself. ``SesFaultProxy.faults`` is a list
of what the next send calls get: "throttle" (429 TooManyRequestsException), "error500",
"reject" (400 MessageRejected), "delay:SECONDS" (then forwarded), or "hang": hold the call
until the caller goes away, then drop it (a worker killed before SES accepted its message).
Other calls pass through.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ERRORS = {
    "throttle": (429, "TooManyRequestsException", "Maximum sending rate exceeded."),
    "error500": (500, "InternalFailure", "An internal error occurred."),
    "reject": (400, "MessageRejected", "Email address is not verified."),
}


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
                        self.send_response(status)
                        self.send_header("x-amzn-ErrorType", code)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(payload)))
                        self.end_headers()
                        self.wfile.write(payload)
                        return
                self._forward(body)

            def _wait_for_hang_up(self) -> None:
                self.connection.settimeout(120)
                try:
                    while self.connection.recv(1024):
                        pass
                except OSError:
                    pass
                self.close_connection = True

            def _forward(self, body: bytes) -> None:
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                request = urllib.request.Request(
                    proxy.upstream + self.path, data=body, headers=headers, method="POST"
                )
                try:
                    with urllib.request.urlopen(request, timeout=30) as response:
                        status, data, rheaders = response.status, response.read(), response.headers
                except urllib.error.HTTPError as exc:
                    status, data, rheaders = exc.code, exc.read(), exc.headers
                self.send_response(status)
                for key, value in rheaders.items():
                    if key.lower() not in {"content-length", "transfer-encoding", "connection"}:
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

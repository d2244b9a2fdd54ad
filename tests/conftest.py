"""Fixtures shared by every test: real AWS stand-ins on loopback, users, API clients."""

from __future__ import annotations

import os
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The project's shared samples (real published mdstat, mdadm --detail, wsrep outputs and the EFS
# fact sheet), copied in from ../shared/fixtures so a clean clone tests against them too.
SHARED_FIXTURES = ROOT / "tests" / "fixtures"
assert any(SHARED_FIXTURES.glob("*/*.txt")), f"no sample outputs in {SHARED_FIXTURES}"
OUTPUT_DIR = ROOT / "test-output"

# boto3 must never find real credentials, nor ask an instance metadata service.
os.environ.update(
    {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    }
)
os.environ.pop("AWS_PROFILE", None)
os.environ.pop("AWS_SESSION_TOKEN", None)


@pytest.fixture(scope="session")
def moto_server() -> Iterator[str]:
    """A real moto server on a free loopback port, for the whole session."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def aws(moto_server: str, settings) -> Iterator[str]:
    """Point Vigil's client factory at the moto server, with its state reset."""
    from apps.lib import aws as aws_lib

    request = urllib.request.Request(f"{moto_server}/moto-api/reset", method="POST")
    urllib.request.urlopen(request, timeout=10).close()
    settings.AWS_ENDPOINT_URL = moto_server
    aws_lib.clear_cache()
    yield moto_server
    aws_lib.clear_cache()


class _AwsErrorHandler(BaseHTTPRequestHandler):
    """Answers every AWS query-protocol call with one error, as EC2 would."""

    code = "AuthFailure"
    status = 401

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = (
            '<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error>'
            f"<Code>{self.code}</Code><Message>Refused by the test endpoint ({self.code})"
            "</Message></Error></Errors><RequestID>test</RequestID></Response>"
        ).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def failing_aws(settings):
    """An AWS endpoint that refuses every call with the given error code (AuthFailure by default)."""
    from apps.lib import aws as aws_lib

    servers = []

    def start(code: str = "AuthFailure", status: int = 401) -> str:
        handler = type("Handler", (_AwsErrorHandler,), {"code": code, "status": status})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        settings.AWS_ENDPOINT_URL = f"http://127.0.0.1:{server.server_port}"
        aws_lib.clear_cache()
        return settings.AWS_ENDPOINT_URL

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
    aws_lib.clear_cache()


@pytest.fixture(autouse=True)
def _fresh_demo_mode() -> Iterator[None]:
    from apps.demo.mode import demo_enabled

    demo_enabled.cache_clear()
    yield
    demo_enabled.cache_clear()


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user("oncall", "oncall@example.com", "correct horse")


@pytest.fixture
def logged_in_client(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def api_client():
    from rest_framework.test import APIClient

    return APIClient()


@pytest.fixture
def api_key(user):
    """``api_key(read_only=True)`` → the raw key of a fresh key for ``user``."""
    from apps.accounts.models import ApiKey

    def issue(read_only: bool = True) -> str:
        return ApiKey.issue(user, "test key", read_only=read_only)[1]

    return issue

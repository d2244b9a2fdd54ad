"""AWS on loopback: the moto server, Vigil's client factory pointed at it, an endpoint that
refuses every call, the synthetic EFS fleet, and the demo's fleet collected on its stand-in.
boto3 never finds real credentials, nor asks an instance metadata service."""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.helpers import demo_account_on_standin
from tests.services import serve_in_a_thread

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
    """Point Vigil's client factory at the moto server, with its state reset (and EFS's
    DescribeReplicationConfigurations, which moto lacks, answered: apps/efs/demo_cloudwatch.py)."""
    # boto3 and the AWS pieces load with the tests that use AWS, not with the plugin
    from apps.efs import demo_cloudwatch
    from apps.lib import aws as aws_lib

    demo_cloudwatch.install_replications()

    request = urllib.request.Request(f"{moto_server}/moto-api/reset", method="POST")
    # The reset walks every backend of every region: over 10 s on a loaded machine.
    urllib.request.urlopen(request, timeout=120).close()
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
    # boto3 and the AWS pieces load with the tests that use AWS, not with the plugin
    from apps.lib import aws as aws_lib

    servers = []

    def start(code: str = "AuthFailure", status: int = 401) -> str:
        handler = type("Handler", (_AwsErrorHandler,), {"code": code, "status": status})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        serve_in_a_thread(server)
        servers.append(server)
        settings.AWS_ENDPOINT_URL = f"http://127.0.0.1:{server.server_port}"
        aws_lib.clear_cache()
        return settings.AWS_ENDPOINT_URL

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()
    aws_lib.clear_cache()


@pytest.fixture
def responder(aws) -> Iterator[object]:
    """moto's GetMetricData answered, for tagged file systems, by the synthetic fleet that
    enforces EFS's limits (apps/efs/demo_cloudwatch.py)."""
    # boto3 and the AWS pieces load with the tests that use AWS, not with the plugin
    from apps.efs import demo_cloudwatch

    installed = demo_cloudwatch.install(demo_cloudwatch.FleetResponder())
    try:
        yield installed
    finally:
        demo_cloudwatch.uninstall()


@pytest.fixture
def collected_demo(settings) -> tuple[int, int]:
    """The demo's EFS fleet discovered and collected once in us-east-1, on its own stand-in:
    (the region's pk, the pk of the file system ``demo-builds-primary``)."""
    # boto3 and the AWS pieces load with the tests that use AWS, not with the plugin
    from apps.efs import demo, tasks
    from apps.efs.models import FileSystem, RegionCollection

    with demo_account_on_standin(settings) as account:
        demo.set_up()
        region = account.regions.get(code="us-east-1")
        rc = RegionCollection.objects.create(region=region)
        tasks.collect_region(rc.pk, region=region.code)
    return region.pk, FileSystem.objects.get(name="demo-builds-primary").pk

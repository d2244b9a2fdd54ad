"""The embedded AWS stand-in for demo mode: a moto server with a demo account's view of AWS.

moto answers DescribeRegions from a fixed list in which every opt-in region is "not-opted-in".
A demo account that has opted in to Hong Kong and Bahrain is more instructive, so the stand-in
replaces that list with a handful of regions and their opt-in status while it runs. This is a
change to the stand-in, not to Vigil: the product code sees an ordinary AWS endpoint.

moto is imported only when a stand-in is built (demo mode and tests): it takes over a second
to import and tens of MB in every process, which a production web or worker process never needs.
"""

from __future__ import annotations

import logging

from apps.regions import concerns

DEMO_REGIONS = {
    "us-east-1": "opt-in-not-required",
    "us-west-2": "opt-in-not-required",
    "eu-west-1": "opt-in-not-required",
    "eu-central-1": "opt-in-not-required",
    "ap-east-1": "opted-in",
    "me-south-1": "opted-in",
    "af-south-1": "not-opted-in",
}


class AwsStandIn:
    """``with AwsStandIn(port=0) as url:`` — a loopback AWS endpoint for the demo account."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        from moto.server import ThreadedMotoServer

        self._server = ThreadedMotoServer(ip_address=host, port=port, verbose=False)
        self._saved_regions: list[object] | None = None
        self.url = ""

    def start(self) -> str:
        from moto.ec2.models.availability_zones_and_regions import Region, RegionsAndZonesBackend

        self._saved_regions = RegionsAndZonesBackend.regions
        RegionsAndZonesBackend.regions = [
            Region(code, f"ec2.{code}.amazonaws.com", status)
            for code, status in DEMO_REGIONS.items()
        ]
        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
        self._server.start()
        host, port = self._server.get_host_and_port()
        self.url = f"http://{host}:{port}"
        for concern in concerns.registered():  # each teaches the stand-in its demo data
            if concern.demo_aws is not None:
                concern.demo_aws()
        return self.url

    def stop(self) -> None:
        from moto.ec2.models.availability_zones_and_regions import RegionsAndZonesBackend

        self._server.stop()
        if self._saved_regions is not None:
            RegionsAndZonesBackend.regions = self._saved_regions
            self._saved_regions = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

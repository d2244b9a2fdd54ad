"""Adapter for CloudWatch: send planned GetMetricData calls, following NextToken.

boto3 calls only. The plan (which queries, batches of at most 500, windows that stay under
100,800 data points) comes from ``cloudwatch_plan.plan_requests``; turning the pages into samples is
``cloudwatch_plan.samples_from_responses``. Throttling and 5xx answers are retried by the client
factory's adaptive retry mode (``apps.lib.aws``); what still fails raises, so a failed call
never turns into zeros.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from apps.lib import aws
from apps.lib.aws import AccountAccess

from .cloudwatch_plan import MetricDataRequest

if TYPE_CHECKING:
    from botocore.client import BaseClient


@dataclass(frozen=True)
class Answer:
    """Every page of one planned request, and how many API calls it took."""

    request: MetricDataRequest
    pages: tuple[dict, ...]

    @property
    def calls(self) -> int:
        return len(self.pages)


def client(region: str, access: AccountAccess | None = None) -> BaseClient:
    """Requests are not checked against the service model on every call: the plan's are, by a
    test (``test_its_requests_match_botocores_get_metric_data_model``)."""
    return aws.client("cloudwatch", region, access or AccountAccess(), validate=False)


def get_metric_data(
    cw: BaseClient, request: MetricDataRequest, *, max_datapoints: int | None = None
) -> Answer:
    """One planned request, every NextToken page of it."""
    params = request.params()
    if max_datapoints is not None:
        params["MaxDatapoints"] = max_datapoints
    pages = []
    while True:
        page = cw.get_metric_data(**params)
        page.pop("ResponseMetadata", None)
        pages.append(page)
        token = page.get("NextToken")
        if not token:
            return Answer(request, tuple(pages))
        params["NextToken"] = token


def fetch(
    region: str,
    access: AccountAccess | None,
    requests: Iterable[MetricDataRequest],
    *,
    max_datapoints: int | None = None,
) -> Iterator[Answer]:
    """Send ``requests`` in order (oldest window first), yielding each answer as it lands."""
    cw = client(region, access)
    for request in requests:
        yield get_metric_data(cw, request, max_datapoints=max_datapoints)

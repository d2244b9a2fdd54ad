"""Adapter for CloudWatch: an account-region's EBS volume and instance metrics over a window,
planned, paged and parsed, piece by piece as they land (``read``).

The plan and the parsing are pure (``cloudwatch_plan``); the calls are the shared round trip
(``apps.lib.cloudwatch``: boto3's paginator, the client's retries).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from apps.lib.cloudwatch import Reading, Window
from apps.lib.stopwatch import Stopwatch

from .cloudwatch_plan import Answers, InstanceRef, VolumeRef, plan_requests, read_answers

if TYPE_CHECKING:
    from botocore.client import BaseClient


def read(
    cw: BaseClient,
    volumes: Sequence[VolumeRef],
    instances: Sequence[InstanceRef],
    window: Window,
    *,
    max_datapoints: int | None = None,
    watch: Stopwatch | None = None,
) -> Reading[Answers]:
    """Every metric of ``volumes`` and ``instances`` over ``window``, oldest piece first:
    each piece's rows per volume, instance and minute (``Answers``), missing minutes as gaps."""

    def parse(pages, piece: Window) -> Answers:
        return read_answers(pages, window=piece)

    requests = plan_requests(volumes, instances, window)
    return Reading(cw, requests, parse, max_datapoints=max_datapoints, watch=watch)

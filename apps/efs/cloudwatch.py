"""Adapter for CloudWatch: an account-region's EFS metrics over a window, planned, paged and
parsed, piece by piece as they land (``read``).

The plan and the parsing are pure (``cloudwatch_plan``); the calls are the shared round trip
(``apps.lib.cloudwatch``: boto3's paginator, the client's retries).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from apps.lib.cloudwatch import Reading, Window
from apps.lib.stopwatch import Stopwatch

from .cloudwatch_plan import Collected, FileSystemRef, plan_requests, samples_from_responses

if TYPE_CHECKING:
    from botocore.client import BaseClient


def read(
    cw: BaseClient,
    filesystems: Sequence[FileSystemRef],
    window: Window,
    *,
    max_datapoints: int | None = None,
    watch: Stopwatch | None = None,
) -> Reading[Collected]:
    """Every metric of ``filesystems`` over ``window``, oldest piece first: each piece's
    values per file system and minute (``Collected``), missing minutes as gaps."""
    ids = [fs.id for fs in filesystems]

    def parse(pages, piece: Window) -> Collected:
        return samples_from_responses(pages, window=piece, filesystem_ids=ids)

    requests = plan_requests(filesystems, window)
    return Reading(cw, requests, parse, max_datapoints=max_datapoints, watch=watch)

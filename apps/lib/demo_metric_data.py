"""GetMetricData as the demo's AWS stand-in answers it for a concern's synthetic fleet (EFS's
``apps/efs/demo_cloudwatch.py``, EBS's ``apps/ebs/demo_cloudwatch.py``), with CloudWatch's
limits enforced: at most 500 queries a call (ValidationError beyond), at most
min(MaxDatapoints, 100,800) data points an answer, the rest behind a NextToken. A concern gives
the series of one query; ``answer`` pages them, and ``responding`` puts a responder in front
of moto's own GetMetricData. A change to the stand-in, not to Vigil.

Only the demo's pieces use it (a concern's ``demo_cloudwatch.py``): it sits here, below the
concerns, for them to import it downward (docs/architecture.md, "Imports point down")."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Protocol

from apps.lib.cloudwatch import MAX_DATAPOINTS_PER_CALL, MAX_QUERIES_PER_CALL

#: One query's data points in [start, end): (bucket start, value), in time order.
Series = Callable[[dict, datetime, datetime], Iterable[tuple[datetime, float]]]


class StandInError(Exception):
    """An error CloudWatch would answer with (its code and message)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class Responder(Protocol):
    def handles(self, account: str, region: str, params: dict) -> bool: ...

    def answer(self, account: str, region: str, params: dict) -> dict[str, Any]: ...


def answer(params: dict, series: Series) -> dict[str, Any]:
    """The GetMetricData answer to ``params`` (the call's parameters, a NextToken's page
    included), each query's points from ``series``."""
    queries = params["MetricDataQueries"]
    if len(queries) > MAX_QUERIES_PER_CALL:
        raise StandInError(
            "ValidationError",
            f"The collection MetricDataQueries must not have a size greater than "
            f"{MAX_QUERIES_PER_CALL}.",
        )
    limit = min(
        int(params.get("MaxDatapoints") or MAX_DATAPOINTS_PER_CALL), MAX_DATAPOINTS_PER_CALL
    )
    skip = int(str(params.get("NextToken") or "0").split(":")[0] or 0)
    start, end = utc(params["StartTime"]), utc(params["EndTime"])
    results, emitted, seen = [], 0, 0
    for query in queries:
        stamps, values = [], []
        for stamp, value in series(query, start, end):
            if seen >= skip and emitted < limit:
                stamps.append(stamp)
                values.append(value)
                emitted += 1
            seen += 1
        results.append(
            {
                "Id": query["Id"],
                "Label": query["MetricStat"]["Metric"]["MetricName"],
                "Timestamps": stamps,
                "Values": values,
                "StatusCode": "Complete",
            }
        )
    out: dict[str, Any] = {"MetricDataResults": results, "Messages": []}
    if seen > skip + emitted:
        out["NextToken"] = f"{skip + emitted}:page"
    return out


def utc(value: datetime | str | float) -> datetime:
    """A StartTime or EndTime as moto passes it on, as an aware datetime."""
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC)
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def responding(previous: Callable, active: Callable[[], Responder | None]) -> Callable:
    """A GetMetricData method for moto's ``CloudWatchResponse``: the calls ``active()`` (the
    responder installed now, or None) handles it answers, the others go on to ``previous``."""
    # moto is the stand-in's: imported only when one is installed (demo mode, tests, benches)
    from moto.cloudwatch.exceptions import CloudWatchException
    from moto.core.responses import ActionResult

    def get_metric_data(self: Any) -> Any:
        responder = active()
        params = self._get_params()
        if responder is None or not responder.handles(self.current_account, self.region, params):
            return previous(self)
        try:
            return ActionResult(responder.answer(self.current_account, self.region, params))
        except StandInError as exc:
            raise CloudWatchException(exc.code, exc.message) from None

    return get_metric_data

"""Plan GetMetricData calls for an account-region's EBS volumes and their instances, and read
the answers back into rows per volume (and instance) and minute.

Pure (no Django, no boto3, no clock). The metrics, statistics and periods are ``limits``'
tables; the window arithmetic (settled, period-aligned windows, cut so a call stays under
100,800 data points) and the request type are shared with EFS (``apps.lib.cloudwatch``).
Every query of a collection rides in the fewest calls: ceil(queries / 500) per window piece.
Windows are aligned to 5 minutes, the period of the instances' balances [M3], so the 60 s
volume queries and the 300 s balance queries share the calls.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from apps.lib.cloudwatch import (
    MAX_DATAPOINTS_PER_CALL,
    MAX_QUERIES_PER_CALL,
    MetricDataRequest,
    Window,
    batched,
    min_calls,
    split_window,
)

from .limits import MetricFact, instance_metrics, volume_metrics

PERIOD_S = 60
#: Windows start and end on 5-minute marks: a 300 s query's buckets then fall inside them.
WINDOW_STEP_S = 300
MINUTES_PER_STEP = WINDOW_STEP_S // PERIOD_S
VOLUME, INSTANCE = "v", "i"
_ID = {VOLUME: re.compile(r"^vol-[0-9a-f]{1,64}$"), INSTANCE: re.compile(r"^i-[0-9a-f]{1,64}$")}
_PREFIX = {VOLUME: "vol-", INSTANCE: "i-"}
_FACTS = {
    VOLUME: {m.field: m for m in volume_metrics("gp2") + volume_metrics("io1")},
    INSTANCE: {m.field: m for m in instance_metrics("m5.large")},
}


@dataclass(frozen=True)
class VolumeRef:
    """What the plan needs of a volume: its type and the instance it is attached to."""

    id: str
    volume_type: str
    instance_id: str | None = None


@dataclass(frozen=True)
class InstanceRef:
    id: str
    instance_type: str = ""


def query_id(kind: str, resource_id: str, fact: MetricFact) -> str:
    """``vol-0abc`` + BurstBalance -> ``v_0abc__burst_balance`` (CloudWatch: a lowercase
    letter first, then letters, digits and underscores)."""
    if not _ID[kind].match(resource_id):
        raise ValueError(
            f"not an EBS {'volume' if kind == VOLUME else 'instance'} id: {resource_id!r}"
        )
    return f"{kind}_{resource_id[len(_PREFIX[kind]) :]}__{fact.field}"


def parse_query_id(qid: str) -> tuple[str, str, MetricFact]:
    """The inverse of ``query_id``: (kind, resource id, fact); ValueError for a foreign Id."""
    head, sep, name = qid.partition("__")
    kind, _, digits = head.partition("_")
    fact = _FACTS.get(kind, {}).get(name)
    resource = f"{_PREFIX.get(kind, '')}{digits}"
    if not sep or fact is None or not _ID[kind].match(resource):
        raise ValueError(f"not one of our query ids: {qid!r}")
    return kind, resource, fact


def _query(kind: str, resource_id: str, fact: MetricFact, instance_id: str | None) -> dict:
    dimensions = [{"Name": "VolumeId" if kind == VOLUME else "InstanceId", "Value": resource_id}]
    if fact.with_instance and instance_id:
        dimensions.append({"Name": "InstanceId", "Value": instance_id})
    return {
        "Id": query_id(kind, resource_id, fact),
        "MetricStat": {
            "Metric": {
                "Namespace": fact.namespace,
                "MetricName": fact.metric,
                "Dimensions": dimensions,
            },
            "Period": fact.period_s,
            "Stat": fact.stat,
        },
        "ReturnData": True,
    }


def build_queries(volumes: Iterable[VolumeRef], instances: Iterable[InstanceRef]) -> list[dict]:
    """Every query worth asking: a volume's metrics only while attached (CloudWatch has none
    otherwise [M1]), the checks asked with the attachment's instance, the metrics of its type;
    the instances' EBS balances only for the sizes that publish them."""
    queries = []
    for v in volumes:
        if v.instance_id is None:
            continue
        for fact in volume_metrics(v.volume_type):
            queries.append(_query(VOLUME, v.id, fact, v.instance_id))
    for i in instances:
        for fact in instance_metrics(i.instance_type):
            queries.append(_query(INSTANCE, i.id, fact, None))
    return queries


def plan_requests(
    volumes: Sequence[VolumeRef],
    instances: Sequence[InstanceRef],
    window: Window,
    *,
    batch_size: int = MAX_QUERIES_PER_CALL,
    max_datapoints: int = MAX_DATAPOINTS_PER_CALL,
) -> list[MetricDataRequest]:
    """Every call of a collection, oldest window piece first. A piece is a whole number of
    5-minute steps, sized so that a full call of 60 s queries stays under ``max_datapoints``."""
    batches = batched(build_queries(volumes, instances), batch_size)
    if not batches:
        return []
    pieces = split_window(
        window,
        max(len(b) for b in batches),
        period_s=WINDOW_STEP_S,
        max_datapoints=max_datapoints // MINUTES_PER_STEP,
    )
    return [MetricDataRequest(piece, tuple(batch)) for piece in pieces for batch in batches]


def floor_calls(
    query_count: int, window: Window, max_datapoints: int = MAX_DATAPOINTS_PER_CALL
) -> int:
    """The fewest calls that can carry ``query_count`` queries over ``window``: ceil(n / 500)
    calls per piece, and as many pieces as the data point limit needs."""
    if not query_count:
        return 0
    per_call = min(query_count, MAX_QUERIES_PER_CALL)
    minutes = (window.end - window.start).total_seconds() / PERIOD_S
    pieces = math.ceil(minutes * per_call / max_datapoints)
    return min_calls(query_count) * max(1, pieces)


# --- Answers back into rows ---------------------------------------------------------------

#: {resource id: {minute: {field: value}}}: only minutes with something in them.
Rows = dict[str, dict[datetime, dict[str, float]]]


@dataclass(frozen=True)
class Dropped:
    """Values CloudWatch sent that were not kept, and why (never stored: a gap)."""

    resource: str
    metric: str
    reason: str
    count: int

    def __str__(self) -> str:
        return f"{self.resource} {self.metric}: {self.count} {self.reason}"


@dataclass(frozen=True)
class Answers:
    volumes: Rows
    instances: Rows
    problems: tuple[str, ...] = ()
    dropped: tuple[Dropped, ...] = field(default_factory=tuple)

    @property
    def dropped_count(self) -> int:
        return sum(d.count for d in self.dropped)


def read_answers(pages: Iterable[dict], window: Window | None = None) -> Answers:
    """Merge the ``MetricDataResults`` of any number of pages into rows per volume and per
    instance and minute. A value is dropped and counted, never kept, when it is not a finite
    number, is negative (no EBS metric is), has no timestamp, lies outside ``window`` or off a
    minute, or shares its minute with another value of the same query."""
    rows: dict[str, Rows] = {VOLUME: {}, INSTANCE: {}}
    dropped: dict[tuple[str, str, str], int] = {}
    problems: list[str] = []
    seen: dict[tuple[str, str, datetime], int] = {}

    def drop(resource: str, fact: MetricFact, reason: str, n: int = 1) -> None:
        key = (resource, f"{fact.metric} {fact.stat}", reason)
        dropped[key] = dropped.get(key, 0) + n

    for page in pages:
        for result in page.get("MetricDataResults", []):
            qid = str(result.get("Id", ""))
            try:
                kind, resource, fact = parse_query_id(qid)
            except ValueError as exc:
                problems.append(str(exc))
                continue
            status = result.get("StatusCode", "Complete")
            if status not in ("Complete", "PartialData"):
                problems.append(f"{qid}: {status}")
            stamps, values = result.get("Timestamps") or [], result.get("Values") or []
            if len(values) > len(stamps):
                drop(resource, fact, "without a timestamp", len(values) - len(stamps))
            minutes = rows[kind].setdefault(resource, {})
            for stamp, value in zip(stamps, values, strict=False):
                why = _unusable(value)
                if why:
                    drop(resource, fact, why)
                    continue
                moment = _minute(stamp, window)
                if isinstance(moment, str):
                    drop(resource, fact, moment)
                    continue
                key = (resource, fact.field, moment)
                if key in seen:
                    seen[key] += 1
                    continue
                seen[key] = 1
                minutes.setdefault(moment, {})[fact.field] = float(value)
        for message in page.get("Messages") or []:
            problems.append(f"{message.get('Code', '')}: {message.get('Value', '')}".strip(": "))
    for (resource, name, moment), count in seen.items():
        if count > 1:
            kind = VOLUME if resource.startswith("vol-") else INSTANCE
            rows[kind][resource][moment].pop(name, None)
            drop(resource, _FACTS[kind][name], "duplicate timestamp", count)
    return Answers(
        rows[VOLUME],
        rows[INSTANCE],
        tuple(problems),
        tuple(Dropped(r, m, why, n) for (r, m, why), n in sorted(dropped.items())),
    )


def _unusable(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return "not a number"
    return "negative" if value < 0 else None


def _minute(stamp: object, window: Window | None) -> datetime | str:
    try:
        if isinstance(stamp, str):
            stamp = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        if not isinstance(stamp, datetime):
            return "without a timestamp"
        moment = stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)
    except (TypeError, ValueError, OverflowError):
        return "without a timestamp"
    if moment.second or moment.microsecond:
        return "outside the window"
    if window is not None and not window.start <= moment < window.end:
        return "outside the window"
    return moment


def grid(window: Window) -> list[datetime]:
    """The minutes of ``window``."""
    return [window.start + timedelta(minutes=i) for i in range(window.periods(PERIOD_S))]

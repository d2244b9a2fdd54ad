"""Plan GetMetricData calls for EFS file systems, and turn the answers into wide samples.

Pure (no Django, no boto3, no clock): ``cloudwatch.py`` (the adapter) plans with
``plan_requests``, sends the calls (``apps.lib.cloudwatch``) and hands the pages back to
``samples_from_responses``. Metrics and statistics follow the fact sheet
``shared/fixtures/efs-metrics.md`` (source numbers in brackets); a query Id starts with a
lowercase letter and holds only letters, digits and underscores.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property

from apps.efs.metrics import Sample, sample_of
from apps.lib.cloudwatch import (
    MAX_DATAPOINTS_PER_CALL,
    MAX_QUERIES_PER_CALL,
    PERIOD_S,
    MetricDataRequest,
    Window,
    align,
    batched,
    split_window,
)

NAMESPACE = "AWS/EFS"
STORAGE_CLASSES = ("Total", "Standard", "IA")

_FS_ID = re.compile(r"^fs-[0-9a-z]+$")
_QUERY_ID = re.compile(r"^[a-z][a-zA-Z0-9_]{0,254}$")


@dataclass(frozen=True)
class MetricSpec:
    """One query per file system: which metric and statistic fill which ``Sample`` field."""

    field: str
    metric: str
    stat: str
    key: str
    storage_class: str | None = None


#: IOBytes metrics: Sum and SampleCount only (Average = Sum / SampleCount) [2][3]; metadata
#: also split into reads and writes (Elastic bills them as such, [SIZES] in ``documented``:
#: MetadataIOBytes is kept, the total measured, for the minutes and file systems without the
#: split);
#: PercentIOLimit Maximum; BurstCreditBalance Minimum (the lowest balance in the period);
#: PermittedThroughput Average, a listed statistic equal to the console's Sum at 60 s [1][3];
#: MeteredIOBytes Sum (for utilisation [3]); ClientConnections Sum [2]; StorageBytes per class,
#: Average as in the CDK's canned metric [8].
SPECS: tuple[MetricSpec, ...] = (
    MetricSpec("data_read_bytes", "DataReadIOBytes", "Sum", "read_sum"),
    MetricSpec("data_read_count", "DataReadIOBytes", "SampleCount", "read_n"),
    MetricSpec("data_write_bytes", "DataWriteIOBytes", "Sum", "write_sum"),
    MetricSpec("data_write_count", "DataWriteIOBytes", "SampleCount", "write_n"),
    MetricSpec("metadata_bytes", "MetadataIOBytes", "Sum", "meta_sum"),
    MetricSpec("metadata_count", "MetadataIOBytes", "SampleCount", "meta_n"),
    MetricSpec("metadata_read_bytes", "MetadataReadIOBytes", "Sum", "mread_sum"),
    MetricSpec("metadata_read_count", "MetadataReadIOBytes", "SampleCount", "mread_n"),
    MetricSpec("metadata_write_bytes", "MetadataWriteIOBytes", "Sum", "mwrite_sum"),
    MetricSpec("metadata_write_count", "MetadataWriteIOBytes", "SampleCount", "mwrite_n"),
    MetricSpec("total_bytes", "TotalIOBytes", "Sum", "total_sum"),
    MetricSpec("total_count", "TotalIOBytes", "SampleCount", "total_n"),
    MetricSpec("metered_bytes", "MeteredIOBytes", "Sum", "metered_sum"),
    MetricSpec("percent_io_limit", "PercentIOLimit", "Maximum", "iolimit_max"),
    MetricSpec("burst_credit_balance", "BurstCreditBalance", "Minimum", "credits_min"),
    MetricSpec("permitted_throughput", "PermittedThroughput", "Average", "permitted_avg"),
    MetricSpec("client_connections", "ClientConnections", "Sum", "clients_sum"),
    MetricSpec("storage_total_bytes", "StorageBytes", "Average", "storage_total", "Total"),
    MetricSpec("storage_standard_bytes", "StorageBytes", "Average", "storage_std", "Standard"),
    MetricSpec("storage_ia_bytes", "StorageBytes", "Average", "storage_ia", "IA"),
)
_BY_KEY = {spec.key: spec for spec in SPECS}
#: TimeSinceLastSync, one query per replication destination (dimensions FileSystemId, the
#: source, and DestinationFileSystemId [METRICS]): the most time since a sync in the minute.
SYNC = MetricSpec("time_since_last_sync", "TimeSinceLastSync", "Maximum", "sync")


@dataclass(frozen=True)
class FileSystemRef:
    """What the plan needs to know of a file system (from ``describe_file_systems``)."""

    id: str
    performance_mode: str = "generalPurpose"
    throughput_mode: str = "bursting"
    storage_classes: tuple[str, ...] = STORAGE_CLASSES
    #: Destination file system ids of its replication configuration (DescribeReplicationConfigurations).
    replica_ids: tuple[str, ...] = ()


def specs_for(fs: FileSystemRef) -> list[MetricSpec]:
    """The queries worth asking for ``fs``: PercentIOLimit exists only in General Purpose
    mode [2]; burst credits mean nothing in Elastic mode (inference); StorageBytes only for
    the classes asked for."""
    wanted = []
    for spec in SPECS:
        if spec.metric == "PercentIOLimit" and fs.performance_mode != "generalPurpose":
            continue
        if spec.metric == "BurstCreditBalance" and fs.throughput_mode == "elastic":
            continue
        if spec.storage_class is not None and spec.storage_class not in fs.storage_classes:
            continue
        wanted.append(spec)
    return wanted


def query_id(filesystem_id: str, spec: MetricSpec) -> str:
    """``fs-0123abcd`` + DataReadIOBytes Sum -> ``fs_0123abcd__read_sum``."""
    if not _FS_ID.match(filesystem_id):
        raise ValueError(f"not an EFS file system id: {filesystem_id!r}")
    qid = f"{filesystem_id.replace('-', '_')}__{spec.key}"
    if not _QUERY_ID.match(qid):
        raise ValueError(f"query id {qid!r} breaks CloudWatch's Id rules")
    return qid


def sync_spec(destination_id: str) -> MetricSpec:
    """TimeSinceLastSync towards one destination: ``fs_src__sync_fs_dst`` as its query Id."""
    if not _FS_ID.match(destination_id):
        raise ValueError(f"not an EFS file system id: {destination_id!r}")
    return MetricSpec(
        SYNC.field, SYNC.metric, SYNC.stat, f"sync_{destination_id.replace('-', '_')}"
    )


def destination_of(spec: MetricSpec) -> str | None:
    """The destination file system id of a ``sync_spec``; None for any other spec."""
    prefix = f"{SYNC.key}_"
    return spec.key[len(prefix) :].replace("_", "-") if spec.key.startswith(prefix) else None


def parse_query_id(qid: str) -> tuple[str, MetricSpec]:
    """The inverse of ``query_id``: (file system id, spec); ValueError for a foreign Id."""
    fs_part, sep, key = qid.partition("__")
    spec = _BY_KEY.get(key)
    if spec is None and key.startswith(f"{SYNC.key}_fs_"):
        spec = sync_spec(key[len(SYNC.key) + 1 :].replace("_", "-"))
    filesystem_id = fs_part.replace("_", "-")
    if not sep or spec is None or not _FS_ID.match(filesystem_id):
        raise ValueError(f"not one of our query ids: {qid!r}")
    return filesystem_id, spec


def build_queries(filesystems: Iterable[FileSystemRef], period_s: int = PERIOD_S) -> list[dict]:
    """``MetricDataQueries`` entries for every file system, only what is needed (and one
    TimeSinceLastSync per replication destination)."""
    queries = []
    for fs in filesystems:
        syncs = [sync_spec(d) for d in fs.replica_ids if _FS_ID.match(d)]
        for spec in [*specs_for(fs), *syncs]:
            dimensions = [{"Name": "FileSystemId", "Value": fs.id}]
            if spec.storage_class is not None:
                dimensions.append({"Name": "StorageClass", "Value": spec.storage_class})
            if (destination := destination_of(spec)) is not None:
                dimensions.append({"Name": "DestinationFileSystemId", "Value": destination})
            queries.append(
                {
                    "Id": query_id(fs.id, spec),
                    "MetricStat": {
                        "Metric": {
                            "Namespace": NAMESPACE,
                            "MetricName": spec.metric,
                            "Dimensions": dimensions,
                        },
                        "Period": period_s,
                        "Stat": spec.stat,
                    },
                    "ReturnData": True,
                }
            )
    return queries


# --- Time windows ---------------------------------------------------------------------------

#: The late look reaches back at most this far: 500 queries of 201 minutes fill a call's
#: 100,800 points, so a window of up to 180 minutes keeps every cycle at ceil(queries / 500).
LATE_LOOK_LONGEST = timedelta(minutes=180)


def with_late_look(
    window: Window,
    since: datetime | None,
    *,
    longest: timedelta = LATE_LOOK_LONGEST,
    period_s: int = PERIOD_S,
) -> Window:
    """``window`` reaching back to ``since`` (at most ``longest`` before its end), to ask once
    more for minutes collected since then that may have been empty (CloudWatch delivers some
    data after the settle delay). One window, so the same calls carry it."""
    if since is None:
        return window
    start = max(align(since, period_s), align(window.end - longest, period_s))
    return Window(min(window.start, start), window.end)


def plan_requests(
    filesystems: Sequence[FileSystemRef],
    window: Window,
    *,
    period_s: int = PERIOD_S,
    batch_size: int = MAX_QUERIES_PER_CALL,
    max_datapoints: int = MAX_DATAPOINTS_PER_CALL,
) -> list[MetricDataRequest]:
    """Every call of a collection, oldest window first, so a back-fill progresses in time
    order. All batches share the same sub-windows (sized for the fullest batch)."""
    batches = batched(build_queries(filesystems, period_s), batch_size)
    if not batches:
        return []
    pieces = split_window(
        window, max(len(b) for b in batches), period_s=period_s, max_datapoints=max_datapoints
    )
    return [MetricDataRequest(piece, tuple(batch)) for piece in pieces for batch in batches]


# --- Answers back into samples --------------------------------------------------------------


@dataclass(frozen=True)
class Dropped:
    """Values CloudWatch sent for one file system and metric that were not kept, and why."""

    filesystem_id: str
    metric: str  # "PercentIOLimit Maximum"
    reason: str  # "not a number", "negative", "duplicate timestamp", "outside the window"
    count: int

    def __str__(self) -> str:
        return f"{self.filesystem_id} {self.metric}: {self.count} {self.reason}"


#: Values per file system and period, as they came: {file system id: {period start:
#: {Sample field: value}}}. Only periods with something in them (an empty dict where every
#: value of the period was dropped as a duplicate).
Rows = dict[str, dict[datetime, dict[str, float]]]


@dataclass(frozen=True)
class Collected:
    """What the answers held, per file system and period (``rows``), any trouble reported, and
    the values that were dropped (never stored or charted: the period is a gap). ``samples``
    are the same as wide samples, ascending, with every period of the window asked (``grid``)
    present and all-None where nothing came."""

    rows: Rows
    problems: tuple[str, ...] = field(default_factory=tuple)
    dropped: tuple[Dropped, ...] = field(default_factory=tuple)
    grid: tuple[datetime, ...] = field(default_factory=tuple)
    period_s: int = PERIOD_S
    #: The latest TimeSinceLastSync of each replication: {source id: {destination id:
    #: (minute, seconds)}}.
    syncs: dict[str, dict[str, tuple[datetime, float]]] = field(default_factory=dict)

    @property
    def dropped_count(self) -> int:
        return sum(d.count for d in self.dropped)

    @cached_property
    def samples(self) -> dict[str, tuple[Sample, ...]]:
        out = {}
        for filesystem_id, rows in self.rows.items():
            stamps = sorted(set(rows).union(self.grid))
            out[filesystem_id] = tuple(
                sample_of(t, self.period_s, rows.get(t, _NOTHING)) for t in stamps
            )
        return out


_NOTHING: dict[str, float] = {}
_INF = math.inf


def samples_from_responses(
    responses: Iterable[dict],
    *,
    window: Window | None = None,
    filesystem_ids: Iterable[str] = (),
    period_s: int = PERIOD_S,
) -> Collected:
    """Merge ``MetricDataResults`` of any number of pages and batches into values per file
    system and period (``Collected.rows``, and as wide samples ``Collected.samples``).

    With ``window``, every file system gets a sample for each period of it, all-None when
    CloudWatch had nothing (so "asked, nothing came" is recorded); without, only periods
    that have a value appear. A value never arrives as zero unless CloudWatch said zero.

    A value is dropped and counted (``Collected.dropped``), never kept, when it is not a
    finite number (NaN), is negative (no EFS metric is), shares its timestamp with another
    value of the same query (which one would be true?), lies outside ``window`` or off its
    period boundaries, or has no timestamp to go with it.

    A call's answer holds one value per query and period, a few hundred thousand in a
    back-fill, over a few hundred distinct timestamps: each timestamp is checked once, and a
    value costs a type check, a comparison and a dict store.
    """
    merge = _Merge(window, period_s, filesystem_ids)
    for response in responses:
        for result in response.get("MetricDataResults", []):
            merge.result(result)
        for message in response.get("Messages", []):
            merge.problems.append(
                f"{message.get('Code', '')}: {message.get('Value', '')}".strip(": ")
            )
    return merge.collected()


class _Merge:
    """What ``samples_from_responses`` has read so far, result by result."""

    def __init__(self, window: Window | None, period_s: int, filesystem_ids: Iterable[str]):
        self.window, self.period_s = window, period_s
        self.dropped: dict[tuple[str, str, str], int] = {}
        self.problems: list[str] = []
        self.rows: Rows = {fs: {} for fs in filesystem_ids}
        self.moments: dict[object, datetime | str] = {}  # timestamp as sent -> minute, or why not
        self.duplicates: dict[tuple[str, MetricSpec, datetime], int] = {}
        self.syncs: dict[str, dict[str, tuple[datetime, float]]] = {}

    def drop(self, filesystem_id: str, spec: MetricSpec, reason: str, count: int = 1) -> None:
        key = (filesystem_id, f"{spec.metric} {spec.stat}", reason)
        self.dropped[key] = self.dropped.get(key, 0) + count

    def result(self, result: dict) -> None:
        """One query's ``MetricDataResults`` entry, value by value (the hot loop)."""
        qid = result.get("Id", "")
        try:
            filesystem_id, spec = parse_query_id(qid)
        except ValueError as exc:
            self.problems.append(str(exc))
            return
        status = result.get("StatusCode", "Complete")
        if status not in ("Complete", "PartialData"):
            text = "; ".join(m.get("Value", "") for m in result.get("Messages", []))
            self.problems.append(f"{qid}: {status}" + (f": {text}" if text else ""))
        stamps, values = result.get("Timestamps", []), result.get("Values", [])
        if len(values) > len(stamps):
            self.drop(filesystem_id, spec, "without a timestamp", len(values) - len(stamps))
        destination = destination_of(spec)
        periods = self.rows.setdefault(filesystem_id, {})
        name, window, period_s, moments = spec.field, self.window, self.period_s, self.moments
        for stamp, value in zip(stamps, values, strict=False):
            if value.__class__ is not float or not 0.0 <= value < _INF:
                reason = _unusable_value(value)
                if reason:
                    self.drop(filesystem_id, spec, reason)
                    continue
                value = float(value)
            moment = _moment(moments, stamp, window, period_s)
            if moment.__class__ is str:
                self.drop(filesystem_id, spec, moment)  # type: ignore[arg-type]
                continue
            if destination is not None:  # not a Sample field: the latest per destination
                self._sync(filesystem_id, destination, moment, value)  # type: ignore[arg-type]
                continue
            row = periods.get(moment)  # type: ignore[arg-type]
            if row is None:
                periods[moment] = {name: value}  # type: ignore[index]
            elif name in row:
                key = (filesystem_id, spec, moment)
                self.duplicates[key] = self.duplicates.get(key, 1) + 1  # type: ignore[index]
            else:
                row[name] = value

    def _sync(self, filesystem_id: str, destination: str, moment: datetime, value: float) -> None:
        latest = self.syncs.setdefault(filesystem_id, {}).get(destination)
        if latest is None or latest[0] < moment:
            self.syncs[filesystem_id][destination] = (moment, value)

    def collected(self) -> Collected:
        """Duplicates dropped (every copy), the window's grid laid out."""
        for (filesystem_id, spec, moment), count in self.duplicates.items():
            del self.rows[filesystem_id][moment][spec.field]
            self.drop(filesystem_id, spec, "duplicate timestamp", count)
        grid: tuple[datetime, ...] = ()
        if self.window is not None:
            start, n = self.window.start, self.window.periods(self.period_s)
            grid = tuple(start + timedelta(seconds=i * self.period_s) for i in range(n))
        dropped = sorted(self.dropped.items())
        return Collected(
            self.rows,
            tuple(self.problems),
            tuple(Dropped(fs, metric, why, n) for (fs, metric, why), n in dropped),
            grid,
            self.period_s,
            self.syncs,
        )


def _unusable_value(value: object) -> str | None:
    """Why a value cannot be kept, or None."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return "not a number"
    if value < 0:
        return "negative"
    return None


def _moment(
    seen: dict[object, datetime | str], stamp: object, window: Window | None, period_s: int
) -> datetime | str:
    """The period a timestamp stands for, or why it stands for none (each distinct timestamp
    is looked at once: ``seen`` remembers)."""
    try:
        return seen[stamp]
    except KeyError:
        seen[stamp] = moment = _unusable_stamp(stamp, window, period_s)
        return moment
    except TypeError:  # unhashable: not a timestamp at all
        return "without a timestamp"


def _unusable_stamp(stamp: object, window: Window | None, period_s: int) -> datetime | str:
    try:
        moment = _utc(stamp)  # type: ignore[arg-type]
    except (TypeError, ValueError, AttributeError, OverflowError):
        return "without a timestamp"
    if window is not None and not window.start <= moment < window.end:
        return "outside the window"
    if int(moment.timestamp()) % period_s or moment.microsecond:
        return "outside the window"  # between period boundaries: no minute it belongs to
    return moment


def _utc(stamp: datetime | str) -> datetime:
    if isinstance(stamp, str):
        stamp = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)

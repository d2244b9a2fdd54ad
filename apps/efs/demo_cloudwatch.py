"""A GetMetricData responder for moto serving the synthetic EFS fleet (``demo_workloads.py``) with
CloudWatch's limits enforced (``apps/lib/demo_metric_data.py`` pages the answers), for the demo
stand-in, the tests and the benchmarks. Calls are counted per region; latency, throttling and an
error per region can be injected (``Faults``).

It answers a call whose every query is an AWS/EFS metric of a file system created in moto with
a ``vigil:demo-profile`` tag; any other call goes on to moto unchanged. ``install()`` puts it in
front of moto's own, and has moto give those file systems' sizes and answer
DescribeReplicationConfigurations (which moto lacks) from ``REPLICA_TAG``. Why a responder of
Vigil's own, and what it enforces: docs/efs.md ("Demo mode and collection at scale"). A change
to the stand-in, not to Vigil.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from apps.lib import demo_metric_data
from apps.lib.demo_metric_data import StandInError

from .cloudwatch_plan import NAMESPACE, SPECS, SYNC
from .demo_workloads import DAY_MIN, PROFILES, Profile, minute_values, sizes, sync_lag_s

PROFILE_TAG = "vigil:demo-profile"
PHASE_TAG = "vigil:demo-phase"
REPLICA_TAG = "vigil:demo-replicas"
_FIELD = {(s.metric, s.stat, s.storage_class): s.field for s in (*SPECS, SYNC)}


@dataclass(frozen=True)
class Subject:
    """A tagged file system of moto, as the responder serves it."""

    profile: Profile
    seed: int
    phase: int
    region: str
    file_system_type: str


@dataclass
class Faults:
    latency_s: float = 0.0
    throttle_every: int = 0  # every n-th call is throttled; 0: never
    region_errors: dict[str, tuple[str, str]] = field(default_factory=dict)


@dataclass
class FleetResponder:
    faults: Faults = field(default_factory=Faults)
    calls: Counter = field(default_factory=Counter)
    throttled: Counter = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _n: int = 0

    def reset_counts(self) -> None:
        with self._lock:
            self.calls.clear()
            self.throttled.clear()
            self._n = 0

    def handles(self, account: str, region: str, params: dict) -> bool:
        queries = params.get("MetricDataQueries") or []
        return bool(queries) and all(_profile_of(account, region, q) is not None for q in queries)

    def answer(self, account: str, region: str, params: dict) -> dict[str, Any]:
        with self._lock:
            self._n += 1
            n = self._n
            self.calls[region] += 1
        if self.faults.latency_s:
            time.sleep(self.faults.latency_s)
        if region in self.faults.region_errors:
            raise StandInError(*self.faults.region_errors[region])
        if self.faults.throttle_every and n % self.faults.throttle_every == 0:
            with self._lock:
                self.throttled[region] += 1
            raise StandInError("ThrottlingException", "Rate exceeded")
        return demo_metric_data.answer(
            params, lambda query, start, end: self._series(account, region, query, start, end)
        )

    def _series(self, account: str, region: str, query: dict, start: datetime, end: datetime):
        subject = _profile_of(account, region, query)
        stat = query["MetricStat"]
        metric = stat["Metric"]
        storage_class = next(
            (d["Value"] for d in metric.get("Dimensions", []) if d["Name"] == "StorageClass"),
            None,
        )
        name = _FIELD.get((metric["MetricName"], stat["Stat"], storage_class))
        if name is None:
            return
        period = int(stat["Period"])
        first = int(start.timestamp()) // period * period  # AWS rounds StartTime down
        now_min = int(time.time()) // 60
        for bucket in range(first, int(end.timestamp()), period):
            minute = bucket // 60
            if minute >= now_min:  # the future has no data
                return
            if name.startswith("storage_") and minute % 15:
                continue  # StorageBytes arrives every 15 minutes [2]
            value = _values(subject, minute).get(name)
            if value is not None:
                yield datetime.fromtimestamp(bucket, UTC), value


@lru_cache(maxsize=8192)
def _values(subject: Subject, minute: int) -> dict:
    """Every value of one minute of ``subject``: asked once for the 20-odd queries of a file
    system (``_series`` goes query by query over the same minutes). Read, never changed."""
    return minute_values(
        subject.profile,
        subject.seed,
        minute,
        subject.phase,
        region=subject.region,
        file_system_type=subject.file_system_type,
    )


def _profile_of(account: str, region: str, query: dict) -> Subject | None:
    stat = query.get("MetricStat") or {}
    metric = stat.get("Metric") or {}
    if metric.get("Namespace") != NAMESPACE:
        return None
    fs_id = next(
        (d["Value"] for d in metric.get("Dimensions", []) if d["Name"] == "FileSystemId"), None
    )
    return _lookup(account, region, fs_id) if fs_id else None


def _lookup(account: str, region: str, fs_id: str) -> Subject | None:
    from moto.efs.models import efs_backends

    try:
        backend = efs_backends[account][region]
    except KeyError:
        return None
    fs = backend.file_systems_by_id.get(fs_id)
    if fs is None:
        return None
    tags = {t["Key"]: t["Value"] for t in backend.list_tags_for_resource(fs_id)}
    profile = PROFILES.get(tags.get(PROFILE_TAG, ""))
    if profile is None:
        return None
    return Subject(
        profile,
        int(fs_id[3:11], 16) % 997,
        int(tags.get(PHASE_TAG, "0") or 0),
        region,
        "one_zone" if fs.availability_zone_name else "regional",
    )


def replications(account: str, region: str, now: float) -> list[dict[str, Any]]:
    """DescribeReplicationConfigurations' ``Replications`` of the region: one per file system
    tagged ``REPLICA_TAG``, its LastReplicatedTimestamp from its profile's TimeSinceLastSync."""
    from moto.efs.models import efs_backends

    try:
        backend = efs_backends[account][region]
    except KeyError:
        return []
    out = []
    for fs_id, fs in backend.file_systems_by_id.items():
        tags = {t["Key"]: t["Value"] for t in backend.list_tags_for_resource(fs_id)}
        if not tags.get(REPLICA_TAG):
            continue
        subject = _lookup(account, region, fs_id)
        minute = int(now) // 60
        lag = None
        if subject is not None:
            lag = sync_lag_s(subject.profile, (minute + subject.phase) % DAY_MIN)
        destinations = []
        for item in tags[REPLICA_TAG].split(","):
            dest_region, _, rest = item.strip().partition(":")
            dest_id, _, status = rest.partition(":")
            destination: dict[str, Any] = {
                "Status": status or "ENABLED",
                "FileSystemId": dest_id,
                "Region": dest_region,
            }
            if lag is not None:
                destination["LastReplicatedTimestamp"] = minute * 60 - lag
            destinations.append(destination)
        out.append(
            {
                "SourceFileSystemId": fs_id,
                "SourceFileSystemRegion": region,
                "SourceFileSystemArn": fs.file_system_arn,
                "OriginalSourceFileSystemArn": fs.file_system_arn,
                "CreationTime": fs.creation_time,
                "Destinations": destinations,
            }
        )
    return out


# --- Installation into moto ----------------------------------------------------------------

_installed: FleetResponder | None = None
_original = None
_original_size = None
_replications_installed = False


def install(responder: FleetResponder | None = None) -> FleetResponder:
    """Route GetMetricData calls for tagged EFS file systems to ``responder`` (idempotent)."""
    global _installed, _original, _original_size
    from moto.cloudwatch.responses import CloudWatchResponse

    _installed = responder or _installed or FleetResponder()
    if _original is not None:
        return _installed
    _original = CloudWatchResponse.get_metric_data

    get_metric_data = demo_metric_data.responding(_original, lambda: _installed)
    CloudWatchResponse.get_metric_data = get_metric_data
    _install_sizes()
    install_replications()
    return _installed


def install_replications() -> None:
    """EFS DescribeReplicationConfigurations, which moto 5.2 lacks, answered from
    ``REPLICA_TAG`` tags (idempotent; never uninstalled: it adds an operation moto does not
    have and changes none it has)."""
    global _replications_installed
    from moto.efs.responses import EFSResponse

    if _replications_installed:
        return

    def describe_replication_configurations(self: EFSResponse):
        found = replications(self.current_account, self.region, time.time())
        wanted = (self.querystring.get("FileSystemId") or [None])[0]
        if wanted:
            found = [r for r in found if r["SourceFileSystemId"] == wanted]
        return json.dumps({"Replications": found}), {"status": 200}

    EFSResponse.describe_replication_configurations = describe_replication_configurations
    _replications_installed = True


def _install_sizes() -> None:
    """DescribeFileSystems' ``SizeInBytes`` of a tagged file system: its profile's Standard,
    IA and Archive bytes (moto says 0 for every file system and has no ``ValueInArchive``)."""
    global _original_size
    from moto.efs.models import FileSystem

    _original_size = FileSystem.size_in_bytes

    def size_in_bytes(self: FileSystem) -> dict[str, Any]:
        original = _original_size.fget(self)
        tags = {
            t["Key"]: t["Value"] for t in self._context.list_tags_for_resource(self.file_system_id)
        }
        profile = PROFILES.get(tags.get(PROFILE_TAG, ""))
        return original if profile is None else {**original, **sizes(profile)}

    FileSystem.size_in_bytes = property(size_in_bytes)


def uninstall() -> None:
    global _installed, _original, _original_size
    from moto.cloudwatch.responses import CloudWatchResponse

    if _original is not None:
        CloudWatchResponse.get_metric_data = _original
    if _original_size is not None:
        from moto.efs.models import FileSystem

        FileSystem.size_in_bytes = _original_size
    _installed, _original, _original_size = None, None, None

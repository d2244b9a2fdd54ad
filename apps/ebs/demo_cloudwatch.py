"""A GetMetricData responder for moto serving the synthetic EBS fleet (``demo_workloads.py``) with
CloudWatch's limits enforced (``apps/lib/demo_metric_data.py`` pages the answers), for the demo
stand-in and ``bench/ebs_collect.py``. Calls are counted.

It answers a call whose every query is an AWS/EBS or AWS/EC2 metric of a volume or instance
known to moto, when at least one of them carries a ``vigil:demo-profile`` tag (the untagged
ones, such as the root volumes moto gives every instance, get no data); any other call goes
on to the previous responder (EFS's, then moto's own), so tests that ``put_metric_data``
keep working. As EFS's: a change to the stand-in, not to Vigil.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from apps.lib import demo_metric_data

from .demo_workloads import INSTANCE_PROFILES, PROFILES, instance_values, minute_values
from .limits import INSTANCE_METRICS, VOLUME_METRICS

PROFILE_TAG = "vigil:demo-profile"
PHASE_TAG = "vigil:demo-phase"
_FIELD = {(m.namespace, m.metric): m.field for m in (*VOLUME_METRICS, *INSTANCE_METRICS)}
_DIMENSION = {"AWS/EBS": "VolumeId", "AWS/EC2": "InstanceId"}


@dataclass
class EbsResponder:
    calls: Counter = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def reset_counts(self) -> None:
        with self._lock:
            self.calls.clear()

    def handles(self, account: str, region: str, params: dict) -> bool:
        queries = params.get("MetricDataQueries") or []
        found = [_resource(account, region, q) for q in queries]
        return bool(found) and all(f is not None for f in found) and any(f[1] for f in found)

    def answer(self, account: str, region: str, params: dict) -> dict[str, Any]:
        with self._lock:
            self.calls[region] += 1
        return demo_metric_data.answer(
            params, lambda query, start, end: _series(account, region, query, start, end)
        )


def _resource(account: str, region: str, query: dict) -> tuple[str, str, int] | None:
    """(resource id, its profile or "", its phase) of a query on a volume or instance moto
    knows; None for anything else."""
    metric = (query.get("MetricStat") or {}).get("Metric") or {}
    name = _DIMENSION.get(metric.get("Namespace", ""))
    if name is None or (metric["Namespace"], metric.get("MetricName")) not in _FIELD:
        return None
    resource = next((d["Value"] for d in metric.get("Dimensions", []) if d["Name"] == name), None)
    from moto.ec2.models import ec2_backends  # the stand-in's, loaded only in its process

    try:
        backend = ec2_backends[account][region]
    except KeyError:
        return None
    known = resource in backend.volumes if name == "VolumeId" else _instance(backend, resource)
    if not known:
        return None
    tags = backend.tags.get(resource, {})
    profile = tags.get(PROFILE_TAG, "")
    valid = PROFILES if name == "VolumeId" else INSTANCE_PROFILES
    return resource, profile if profile in valid else "", int(tags.get(PHASE_TAG, "0") or 0)


def _instance(backend: Any, instance_id: str | None) -> bool:
    from moto.ec2.exceptions import InvalidInstanceIdError  # the stand-in's, as above

    try:
        backend.get_instance(instance_id)
    except InvalidInstanceIdError:
        return False
    return True


def _series(
    account: str, region: str, query: dict, start: datetime, end: datetime
) -> Iterator[tuple[datetime, float]]:
    resource, profile, phase = _resource(account, region, query)  # type: ignore[misc]
    if not profile:
        return
    stat = query["MetricStat"]
    metric = stat["Metric"]
    name = _FIELD[(metric["Namespace"], metric["MetricName"])]
    period = int(stat["Period"])
    now_minute = int(time.time()) // 60
    first = int(start.timestamp()) // period * period
    for bucket in range(first, int(end.timestamp()), period):
        minute = bucket // 60
        if minute >= now_minute:  # the future has no data
            return
        if metric["Namespace"] == "AWS/EBS":
            value = minute_values(profile, minute, phase).get(name)
        else:
            value = instance_values(profile, minute, phase).get(name)
        if value is not None:
            yield datetime.fromtimestamp(bucket, UTC), value


# --- Installation into moto ----------------------------------------------------------------

_installed: EbsResponder | None = None


def install(responder: EbsResponder | None = None) -> EbsResponder:
    """Route GetMetricData calls for tagged volumes and instances to ``responder``; other calls
    go on to whatever answered them before. Idempotent, and installed again if another
    responder put moto's own method back (EFS's ``uninstall``)."""
    global _installed
    from moto.cloudwatch.responses import CloudWatchResponse

    _installed = responder or _installed or EbsResponder()
    previous = CloudWatchResponse.get_metric_data
    if getattr(previous, "vigil_ebs", False):
        return _installed

    get_metric_data = demo_metric_data.responding(previous, lambda: _installed)
    get_metric_data.vigil_ebs = True  # type: ignore[attr-defined]
    CloudWatchResponse.get_metric_data = get_metric_data
    return _installed


def uninstall() -> None:
    """Stop answering (the wrapper stays in moto's chain, passing every call on)."""
    global _installed
    _installed = None

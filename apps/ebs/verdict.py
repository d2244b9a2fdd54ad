"""An EBS volume's status: impaired, out of burst credits (or when it will be, for the volume
and for its instance's EBS bandwidth), at its provisioned limits, or missing data.

Pure (no Django, no I/O). The credit forecast is the one EFS uses (``apps.lib.credits``),
fitted to ``BurstBalance`` and the instance's ``EBSIOBalance%`` / ``EBSByteBalance%`` (all in
percent). Facts and sources: ``limits``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from apps.lib.credits import CreditForecast, CreditState, credit_forecast
from apps.lib.formats import minutes_label, rough_duration, span_label
from apps.lib.status import Status, Verdict

from .limits import BURSTING, PROVISIONED_IOPS, Performance, performance
from .metrics import InstanceSample, VolumeSample, idle_pct, iops, mibps, per_op


@dataclass(frozen=True)
class Thresholds:
    """The data behind the rules; the rules themselves are code (STYLE.md)."""

    stale_after: timedelta = timedelta(minutes=20)
    forecast_window: timedelta = timedelta(hours=1)
    forecast_min_points: int = 10
    instance_min_points: int = 6  # the balances come every 5 minutes [M3]
    exhaustion_warning: timedelta = timedelta(hours=12)
    exhaustion_critical: timedelta = timedelta(hours=1)
    stalled_within: timedelta = timedelta(minutes=5)
    utilisation_pct: float = 90.0
    utilisation_for: timedelta = timedelta(minutes=15)
    #: Share of the minutes of a "for 15 min" window that must have data (or fail a check).
    min_coverage: float = 0.8


@dataclass(frozen=True)
class VolumeFacts:
    """What DescribeVolumes says of the volume (``iops``/``mibps``: provisioned, if any)."""

    volume_type: str
    size_gib: float
    iops: float | None = None
    mibps: float | None = None
    attached: bool = True

    @property
    def performance(self) -> Performance:
        return performance(self.volume_type, self.size_gib, self.iops, self.mibps)


@dataclass(frozen=True)
class InstanceFacts:
    label: str  # "db-1 (i-0abc…)"
    samples: Sequence[InstanceSample] = ()


def volume_verdict(
    samples: Sequence[VolumeSample],
    now: datetime,
    facts: VolumeFacts,
    *,
    instance: InstanceFacts | None = None,
    carries: Sequence[str] = (),
    thresholds: Thresholds = Thresholds(),
) -> Verdict:
    """Status of one volume from its recent minutes (at least ``forecast_window`` of them),
    and of the instance it is attached to (its EBS burst buckets). ``carries`` names what
    Vigil watches on that instance ("Galera node db-1 of prod"), told with a finding."""
    th = thresholds
    if not facts.attached:
        return Verdict(
            Status.OK, "not attached: CloudWatch reports nothing for a detached volume", {}
        )
    ordered = sorted((s for s in samples if s.has_data()), key=lambda s: s.timestamp)
    if not ordered:
        return Verdict(Status.UNKNOWN, "no data yet", _performance_figures(facts))
    figures = _figures(ordered, facts)
    silent = now - ordered[-1].timestamp
    if silent >= th.stale_after:
        label = minutes_label(int(silent.total_seconds() // 60))
        return Verdict(Status.UNKNOWN, f"no data for {label}", figures)

    findings: list[tuple[Status, str]] = []
    # The newest minutes read (a settled window ends minutes before now).
    since = ordered[-1].timestamp - th.stalled_within
    stalled = [s.timestamp for s in ordered if s.timestamp > since and (s.stalled or 0) >= 1]
    figures["stalled"] = bool(stalled)
    if stalled:
        findings.append(
            (
                Status.CRITICAL,
                f"I/O stalled at {stalled[-1]:%H:%M} UTC (VolumeStalledIOCheck): "
                "the volume is impaired",
            )
        )
    perf = facts.performance
    if facts.volume_type in BURSTING:
        forecast = _forecast(ordered, lambda s: s.burst_balance, now, th, th.forecast_min_points)
        figures.update(_forecast_figures("", forecast))
        findings += _credit_findings(forecast, f"{facts.volume_type} burst ", th, _held_to(perf))
    findings += _limit_findings(ordered, facts, perf, th, figures)
    if instance is not None:
        figures["instance"] = instance.label
        findings += _instance_findings(instance, now, th, figures)
    if carries:
        figures["carries"] = list(carries)
    if not findings:
        return Verdict(Status.OK, _ok_reason(figures, facts), figures)
    findings.sort(key=lambda f: -f[0].severity)
    reasons = [reason for _, reason in findings]
    if carries:  # on the first clause: an email's subject line is the first clause
        reasons[0] += f" (under {', '.join(carries)})"
    return Verdict(findings[0][0], "; ".join(reasons), figures)


def _forecast(samples, value_of, now, th: Thresholds, min_points: int) -> CreditForecast:
    points = [(s.timestamp, value_of(s)) for s in samples]
    return credit_forecast(points, now, window=th.forecast_window, min_points=min_points)


def _credit_findings(
    forecast: CreditForecast, what: str, th: Thresholds, held_to: str
) -> list[tuple[Status, str]]:
    if forecast.state is CreditState.EXHAUSTED:
        return [(Status.CRITICAL, f"{what}credits exhausted{held_to}")]
    if forecast.state is CreditState.DRAINING:
        left = timedelta(seconds=forecast.seconds_to_exhaustion or 0.0)
        if left <= th.exhaustion_critical:
            return [(Status.CRITICAL, f"{what}{forecast.reason}")]
        if left <= th.exhaustion_warning:
            return [(Status.WARNING, f"{what}{forecast.reason}")]
    return []


def _held_to(perf: Performance) -> str:
    if perf.baseline_iops is not None:
        return f": held to its {perf.baseline_iops:,.0f} IOPS baseline"
    if perf.baseline_mibps is not None:
        return f": held to its {perf.baseline_mibps:,.1f} MiB/s baseline"
    return ""


def _sustained(samples, value_of, th: Thresholds) -> list[float]:
    """Values of the last ``utilisation_for`` of data, or [] when too few minutes have one."""
    last = samples[-1]
    since = last.timestamp - th.utilisation_for
    values = [v for s in samples if s.timestamp > since and (v := value_of(s)) is not None]
    expected = th.utilisation_for.total_seconds() / last.period_s
    return values if len(values) >= th.min_coverage * expected else []


def _limit_findings(
    samples: Sequence[VolumeSample],
    facts: VolumeFacts,
    perf: Performance,
    th: Thresholds,
    figures: dict,
) -> list[tuple[Status, str]]:
    """Provisioned volumes (gp3, io1, io2) used near their IOPS or throughput for the window,
    and any volume whose exceeded checks failed for most of it."""
    found: list[tuple[Status, str]] = []
    span = span_label(th.utilisation_for)
    if facts.volume_type == "gp3" or facts.volume_type in PROVISIONED_IOPS:
        for label, value_of, limit, unit in (
            ("IOPS", iops, perf.baseline_iops, "IOPS"),
            ("throughput", mibps, perf.max_mibps, "MiB/s"),
        ):
            used = _sustained(samples, value_of, th) if limit else []
            if used and min(used) / limit * 100 > th.utilisation_pct:
                found.append(
                    (
                        Status.WARNING,
                        f"{label} above {th.utilisation_pct:g} % of its provisioned "
                        f"{limit:,.0f} {unit} for {span}",
                    )
                )
    for key, check, what in (
        ("iops_exceeded", "VolumeIOPSExceededCheck", "IOPS"),
        ("throughput_exceeded", "VolumeThroughputExceededCheck", "throughput"),
    ):
        values = _sustained(samples, lambda s, key=key: getattr(s, key), th)
        failed = sum(1 for v in values if v >= 1)
        figures[f"{key}_minutes"] = failed if values else None
        if values and failed >= th.min_coverage * len(values):
            found.append(
                (
                    Status.WARNING,
                    f"at its {what} limit: asked for more in {failed} of the last "
                    f"{len(values)} min ({check})",
                )
            )
    return found


def instance_figures(instance: InstanceFacts, now: datetime, th: Thresholds) -> dict:
    """The instance's EBS burst figures (balances, drain, time to exhaustion) on their own."""
    figures: dict = {}
    _instance_findings(instance, now, th, figures)
    return figures


def _instance_findings(
    instance: InstanceFacts, now: datetime, th: Thresholds, figures: dict
) -> list[tuple[Status, str]]:
    """The instance's EBS burst buckets run dry (the volume is then throttled by the instance
    whatever its own credits), and its exceeded checks."""
    ordered = sorted(instance.samples, key=lambda s: s.timestamp)
    found: list[tuple[Status, str]] = []
    for key, value_of, what in (
        ("instance_io", lambda s: s.io_balance, "EBS I/O burst (EBSIOBalance%) "),
        ("instance_byte", lambda s: s.byte_balance, "EBS throughput burst (EBSByteBalance%) "),
    ):
        if not any(value_of(s) is not None for s in ordered):
            continue
        forecast = _forecast(ordered, value_of, now, th, th.instance_min_points)
        figures.update(_forecast_figures(f"{key}_", forecast))
        found += _credit_findings(forecast, f"instance {instance.label}: {what}", th, "")
    return found


def _figures(ordered: Sequence[VolumeSample], facts: VolumeFacts) -> dict:
    """The latest known value of each figure, for the page, the API and the email."""

    def latest(value_of):
        for s in reversed(ordered):
            if (v := value_of(s)) is not None:
                return v
        return None

    figures = _performance_figures(facts)
    figures.update(
        {
            "last_data_at": ordered[-1].timestamp.isoformat(),
            "iops": latest(iops),
            "mibps": latest(mibps),
            "read_ms": latest(lambda s: per_op(s.read_time, s.read_ops, 1000.0)),
            "write_ms": latest(lambda s: per_op(s.write_time, s.write_ops, 1000.0)),
            "queue_length": latest(lambda s: s.queue_length),
            "idle_pct": latest(idle_pct),
            "burst_balance_pct": latest(lambda s: s.burst_balance),
            "throughput_pct": latest(lambda s: s.throughput_pct),
        }
    )
    limit = figures.get("iops_limit")
    if figures["iops"] is not None and limit:
        figures["iops_used_pct"] = figures["iops"] / limit * 100
    limit = figures.get("mibps_limit")
    if figures["mibps"] is not None and limit:
        figures["mibps_used_pct"] = figures["mibps"] / limit * 100
    return figures


def _performance_figures(facts: VolumeFacts) -> dict:
    perf = facts.performance
    return {
        "volume_type": facts.volume_type,
        "baseline_iops": perf.baseline_iops,
        "burst_iops": perf.burst_iops,
        "baseline_mibps": perf.baseline_mibps,
        "burst_mibps": perf.burst_mibps,
        "iops_limit": perf.limit_iops,
        "mibps_limit": perf.limit_mibps,
    }


def _forecast_figures(prefix: str, forecast: CreditForecast) -> dict:
    seconds = forecast.seconds_to_exhaustion
    drain = forecast.drain_per_s
    return {
        f"{prefix}credit_state": forecast.state.value,
        f"{prefix}balance_pct": forecast.balance,
        f"{prefix}drain_pct_per_hour": None if drain is None else drain * 3600,
        f"{prefix}hours_to_exhaustion": None if seconds is None else seconds / 3600,
        f"{prefix}credits_exhausted_at": (
            None if forecast.exhaustion_at is None else forecast.exhaustion_at.isoformat()
        ),
    }


def _ok_reason(figures: dict, facts: VolumeFacts) -> str:
    parts = []
    if figures.get("iops") is not None:
        limit = figures.get("iops_limit")
        of = f" of {limit:,.0f}" if limit else ""
        parts.append(f"{figures['iops']:,.0f}{of} IOPS")
    if figures.get("mibps") is not None:
        parts.append(f"{figures['mibps']:,.1f} MiB/s")
    if facts.volume_type in BURSTING and figures.get("burst_balance_pct") is not None:
        hours = figures.get("hours_to_exhaustion")
        left = (
            "not draining"
            if hours is None
            else f"lasting {rough_duration(hours * 3600)} at this rate"
        )
        parts.append(f"burst balance {figures['burst_balance_pct']:.0f} %, {left}")
    return "ok: " + ", ".join(parts) if parts else "ok"

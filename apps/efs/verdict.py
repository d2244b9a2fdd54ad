"""When do a file system's burst credits run out, and what is its status now.

Pure (no Django, no I/O), after the fact sheet ``shared/fixtures/efs-metrics.md`` (source
numbers in brackets): credits are earned below the baseline and spent above it on metered
throughput, and at a zero balance PermittedThroughput drops to the baseline [4][6].

The forecast (``apps.lib.credits``, shared with EBS) fits the BurstCreditBalance readings of a
window (3 h by default).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from apps.efs.documented import LIMITS, ModeLimits, Table, credit_cap_bytes, mode_limits, value
from apps.efs.limits import combined_share_pct, headroom, headroom_figures
from apps.efs.metrics import (
    MIB,
    Columns,
    Sample,
    baseline_mibps,
    burst_mibps,
    permitted_mibps,
    throughput_utilisation_pct,
)
from apps.efs.replication import Replica, replica_findings
from apps.lib.credits import CreditForecast, CreditState, credit_forecast
from apps.lib.formats import mibps, rough_duration
from apps.lib.formats import minutes_label as _minutes_label
from apps.lib.formats import span_label as _span_label
from apps.lib.status import Status, Verdict
from apps.lib.thresholds import Notes, Spec


def credit_points(samples: Iterable[Sample]) -> list[tuple[datetime, float | None]]:
    """(timestamp, BurstCreditBalance) pairs of ``samples``, gaps kept as None."""
    return [(s.timestamp, s.burst_credit_balance) for s in samples]


def credit_points_of(series: Columns) -> list[tuple[datetime, float | None]]:
    """``credit_points`` of samples read as ``Columns``."""
    return [
        (datetime.fromtimestamp(ts, UTC), balance)
        for ts, balance in zip(series["ts"], series["burst_credit_balance"], strict=True)
    ]


@dataclass(frozen=True)
class CreditStep:
    """One step of the bursting credit model (for the demo fleet and for what-ifs)."""

    balance_bytes: float
    permitted_bytes_per_s: float
    served_bytes_per_s: float


def credit_step(
    balance_bytes: float,
    demand_bytes_per_s: float,
    standard_bytes: float,
    seconds: float = 60.0,
    *,
    max_balance_bytes: float | None = None,
) -> CreditStep:
    """Serve ``demand`` (metered bytes/s) for ``seconds`` under the bursting model [4][6]:
    with credits the file system may burst, without it is capped at the baseline; credits
    are earned below the baseline and spent above it, never below zero, and held up to
    ``max_balance_bytes`` (``documented.credit_cap_bytes``)."""
    baseline = baseline_mibps(standard_bytes) * MIB
    permitted = burst_mibps(standard_bytes) * MIB if balance_bytes > 0 else baseline
    served = min(max(0.0, demand_bytes_per_s), permitted)
    balance = balance_bytes + (baseline - served) * seconds
    if balance < 0:
        # Credits ran out within the step: the rest of it ran at the baseline.
        served = baseline + balance_bytes / seconds
        balance = 0.0
    if max_balance_bytes is not None:
        balance = min(balance, max_balance_bytes)
    return CreditStep(balance, permitted, served)


# --- Status -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Thresholds:
    """The data behind the rules; the rules themselves are code (STYLE.md)."""

    stale_after: timedelta = timedelta(minutes=15)
    forecast_window: timedelta = timedelta(hours=3)
    forecast_min_points: int = 10
    exhausted_bytes: float = 0.0
    exhaustion_warning: timedelta = timedelta(hours=12)
    exhaustion_critical: timedelta = timedelta(hours=1)
    io_limit_pct: float = 90.0
    io_limit_for: timedelta = timedelta(minutes=15)
    utilisation_pct: float = 90.0
    utilisation_for: timedelta = timedelta(minutes=15)
    #: Read plus write throughput, as a share of their one documented budget.
    combined_pct: float = 90.0
    #: Share of the minutes of a "for 15 min" window that must have data to judge it.
    min_coverage: float = 0.8
    #: A replica not synced for longer: warning (AWS's documented RPO), critical.
    replica_warning: timedelta = timedelta(minutes=value(LIMITS, "replication.rpo_minutes"))
    replica_critical: timedelta = timedelta(minutes=60)
    #: Which thresholds a region or this file system set (``apps.lib.thresholds.resolve``).
    notes: Notes = Notes()


def _hours(number: float) -> timedelta:
    return timedelta(hours=number)


def _in_hours(span: timedelta) -> float:
    return span.total_seconds() / 3600


#: The thresholds a region or one file system may set over the defaults (``Thresholds``).
SPECS = (
    Spec("io_limit_pct", "PercentIOLimit above", "%", 1, 100),
    Spec("utilisation_pct", "Throughput above, of permitted", "%", 1, 100),
    Spec("combined_pct", "Read and write throughput above, of their limit", "%", 1, 100),
    Spec(
        "exhaustion_warning_hours", "Credits last less than (warning)", "h", 0.1, 168,
        field="exhaustion_warning", to_field=_hours, from_field=_in_hours,
    ),
    Spec(
        "exhaustion_critical_hours", "Credits last less than (critical)", "h", 0.1, 168,
        field="exhaustion_critical", to_field=_hours, from_field=_in_hours,
        at_most="exhaustion_warning_hours",
    ),
)  # fmt: skip


def filesystem_verdict(
    samples: Sequence[Sample],
    now: datetime,
    *,
    throughput_mode: str = "bursting",
    performance_mode: str = "generalPurpose",
    standard_bytes: float | None = None,
    thresholds: Thresholds = Thresholds(),
    file_system_type: str = "regional",
    region: str = "",
    limits: Table = LIMITS,
    replicas: Sequence[Replica] = (),
) -> Verdict:
    """Status of one file system from its recent samples (at least ``forecast_window`` of
    them for the credit forecast). ``throughput_mode`` is the EFS API's ``bursting``,
    ``provisioned`` or ``elastic``; credit rules apply only to ``bursting``. The Standard
    size comes from ``standard_bytes`` or else the latest StorageBytes Standard sample. The
    figures include the headroom under the documented limits of its type (``regional`` or
    ``one_zone``), mode and ``region`` (``limits.headroom``) of the latest minute with
    operations; ``replicas`` are its replication destinations (``replica_findings``).
    """
    th = thresholds
    ordered = sorted((s for s in samples if s.has_data()), key=lambda s: s.timestamp)
    if not ordered:
        return Verdict(Status.UNKNOWN, "no data yet", {})
    last = ordered[-1]
    figures = _figures(ordered, throughput_mode, standard_bytes, limits)
    figures["file_system_type"] = file_system_type
    with_ops = next((s for s in reversed(ordered) if s.total_count is not None), None)
    room = headroom(
        with_ops,
        performance_mode,
        throughput_mode,
        file_system_type=file_system_type,
        region=region,
        limits=limits,
    )
    figures.update(headroom_figures(room))
    silent = now - last.timestamp
    if silent >= th.stale_after:
        minutes = int(silent.total_seconds() // 60)
        return Verdict(Status.UNKNOWN, f"no data for {_minutes_label(minutes)}", figures)

    findings: list[tuple[Status, str]] = []
    if throughput_mode == "bursting":
        credit, more = _credit_findings(ordered, now, th, figures.get("baseline_mibps"))
        findings += credit
        figures.update(more)
    documented = mode_limits(limits, file_system_type, throughput_mode, region)
    findings += _load_findings(ordered, th, documented)
    findings += replica_findings(replicas, now, th.replica_warning, th.replica_critical)
    lags = [now - r.last_sync_at for r in replicas if r.last_sync_at and r.status == "ENABLED"]
    figures["replica_count"] = len(replicas)
    figures["replica_lag_minutes"] = max(lags).total_seconds() / 60 if lags else None

    if not findings:
        return Verdict(Status.OK, _ok_reason(figures), figures)
    findings.sort(key=lambda f: -f[0].severity)
    return Verdict(findings[0][0], "; ".join(reason for _, reason in findings), figures)


def _credit_findings(
    ordered: Sequence[Sample], now: datetime, th: Thresholds, baseline: float | None
) -> tuple[list[tuple[Status, str]], dict]:
    """What the burst credits say (exhausted, or running out sooner than the thresholds
    allow), and the forecast's figures."""
    findings: list[tuple[Status, str]] = []
    forecast = credit_forecast(
        credit_points(ordered),
        now,
        window=th.forecast_window,
        min_points=th.forecast_min_points,
        exhausted_bytes=th.exhausted_bytes,
    )
    figures = _forecast_figures(forecast)
    figures.update(_drained_figures(ordered, now, th.forecast_window))
    if forecast.state is CreditState.EXHAUSTED:
        cap = permitted_mibps(ordered[-1]) or baseline
        capped = f"{mibps(cap)} baseline" if cap else "baseline"
        findings.append(
            (Status.CRITICAL, f"burst credits exhausted: throughput capped at {capped}")
        )
    elif forecast.state is CreditState.DRAINING:
        left = timedelta(seconds=forecast.seconds_to_exhaustion or 0.0)
        if left <= th.exhaustion_critical:
            whose = th.notes.suffix("exhaustion_critical_hours")
            findings.append((Status.CRITICAL, forecast.reason + whose))
        elif left <= th.exhaustion_warning:
            whose = th.notes.suffix("exhaustion_warning_hours")
            findings.append((Status.WARNING, forecast.reason + whose))
    return findings, figures


def _load_findings(
    ordered: Sequence[Sample], th: Thresholds, documented: ModeLimits
) -> list[tuple[Status, str]]:
    """The load held above its thresholds for their durations: PercentIOLimit, throughput
    of permitted, and reads and writes of their one documented limit (``documented``)."""
    findings: list[tuple[Status, str]] = []
    io_window = _sustained(ordered, lambda s: s.percent_io_limit, th.io_limit_for, th)
    if io_window and min(io_window) > th.io_limit_pct:
        findings.append(
            (
                Status.WARNING,
                f"PercentIOLimit above {th.io_limit_pct:g} %{th.notes.suffix('io_limit_pct')} "
                f"for {_span_label(th.io_limit_for)}",
            )
        )
    used = _sustained(ordered, throughput_utilisation_pct, th.utilisation_for, th)
    if used and min(used) > th.utilisation_pct:
        findings.append(
            (
                Status.WARNING,
                f"throughput above {th.utilisation_pct:g} % of permitted"
                f"{th.notes.suffix('utilisation_pct')} for "
                f"{_span_label(th.utilisation_for)}",
            )
        )
    combined = _sustained(
        ordered, lambda s: combined_share_pct(s, documented), th.utilisation_for, th
    )
    if combined and min(combined) > th.combined_pct:
        findings.append(
            (
                Status.WARNING,
                f"read and write throughput above {th.combined_pct:g} % of their one documented "
                f"limit{th.notes.suffix('combined_pct')} for {_span_label(th.utilisation_for)}",
            )
        )
    return findings


def _sustained(samples, value_of, duration: timedelta, th: Thresholds) -> list[float]:
    """Values of the last ``duration`` of data, or [] when too few minutes have a value."""
    last = samples[-1]
    since = last.timestamp - duration
    values = [v for s in samples if s.timestamp > since and (v := value_of(s)) is not None]
    expected = duration.total_seconds() / last.period_s
    return values if len(values) >= th.min_coverage * expected else []


def _figures(ordered: Sequence[Sample], mode: str, standard: float | None, limits: Table) -> dict:
    """The latest known value of each figure, for the page, the API and the email."""

    def latest(value_of):
        for s in reversed(ordered):
            if (v := value_of(s)) is not None:
                return v
        return None

    if standard is None:
        standard = latest(lambda s: s.storage_standard_bytes)
    figures: dict = {
        "last_data_at": ordered[-1].timestamp.isoformat(),
        "throughput_mode": mode,
        "io_limit_pct": latest(lambda s: s.percent_io_limit),
        "throughput_utilisation_pct": latest(throughput_utilisation_pct),
        "permitted_mibps": latest(permitted_mibps),
        "credit_balance_bytes": latest(lambda s: s.burst_credit_balance),
        "standard_bytes": standard,
    }
    if standard is not None and mode == "bursting":
        figures["baseline_mibps"] = baseline_mibps(standard, limits)
        figures["burst_mibps"] = burst_mibps(standard, limits)
        figures["credit_cap_bytes"] = credit_cap_bytes(standard, limits)
    return figures


def _forecast_figures(forecast: CreditForecast) -> dict:
    hours = forecast.seconds_to_exhaustion
    return {
        "credit_state": forecast.state.value,
        "credit_drain_mibps": forecast.drain_mibps,
        "hours_to_exhaustion": None if hours is None else hours / 3600,
        "credits_exhausted_at": (
            None if forecast.exhaustion_at is None else forecast.exhaustion_at.isoformat()
        ),
    }


def _drained_figures(ordered: Sequence[Sample], now: datetime, window: timedelta) -> dict:
    """Net credits spent over the forecast window (earned ones deducted), for the email."""
    since = now - window
    balances = [
        s.burst_credit_balance
        for s in ordered
        if s.timestamp >= since and s.burst_credit_balance is not None
    ]
    if len(balances) < 2:
        return {}
    return {
        "credits_drained_bytes": max(0.0, balances[0] - balances[-1]),
        "drain_window_hours": window.total_seconds() / 3600,
    }


def _ok_reason(figures: dict) -> str:
    parts = []
    if figures.get("io_limit_pct") is not None:
        parts.append(f"{figures['io_limit_pct']:.0f} % of I/O limit")
    if figures.get("throughput_utilisation_pct") is not None:
        parts.append(f"{figures['throughput_utilisation_pct']:.0f} % of permitted throughput")
    if figures.get("credit_state") in (CreditState.NOT_DRAINING, CreditState.DRAINING):
        hours = figures.get("hours_to_exhaustion")
        parts.append(
            "credits not draining"
            if hours is None
            else f"credits last {rough_duration(hours * 3600)}"
        )
    if figures.get("replica_lag_minutes") is not None:
        lag = rough_duration(figures["replica_lag_minutes"] * 60)
        parts.append(
            f"replica{'s' if figures.get('replica_count', 0) > 1 else ''} synced {lag} ago"
        )
    return "ok: " + ", ".join(parts) if parts else "ok"

"""The status of a keep-alive probe target, from one measurement (pure: no Django, no I/O).

Critical when the target could not be measured (unreachable, TLS failure, timeout), answered
with a 5xx, or showed an expired certificate; warning when the idle timeout is outside the expected range, changed from the
previous measurement by more than a tolerance, or the certificate expires soon; ok otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from apps.lib.status import Status, Verdict
from apps.lib.thresholds import Notes, Spec

if TYPE_CHECKING:
    from apps.probes.keepalive import Measurement


@dataclass(frozen=True)
class Thresholds:
    """Only thresholds are data (the expected range is the target's own field)."""

    tolerance_s: float = 1.0  # the idle timeout changed by more since the last probe: warning
    cert_warn_days: int = 14  # the certificate expires within: warning
    #: Which thresholds a region or this target set (``apps.lib.thresholds.resolve``).
    notes: Notes = Notes()


#: The thresholds a region or one target may set over the defaults (``Thresholds``).
SPECS = (
    Spec("tolerance_s", "Idle timeout changed by more than", "s", 0, 3600),
    Spec("cert_warn_days", "TLS certificate expires within", "days", 0, 365, whole=True),
)


def probe_verdict(
    measurement: Measurement,
    expected_range: tuple[float, float] | None = None,
    previous_idle_s: float | None = None,
    thresholds: Thresholds = Thresholds(),
    now: datetime | None = None,
) -> Verdict:
    """Judge one measurement. ``now`` (timezone-aware) is needed for the certificate check."""
    m = measurement
    tolerance_s, cert_warn_days = thresholds.tolerance_s, thresholds.cert_warn_days
    figures = {
        "idle_timeout_s": m.idle_timeout_s,
        "closed_by": m.closed_by,
        "advertised_timeout_s": m.advertised_timeout_s,
        "status_code": m.status_code,
        "total_s": m.total_s,
    }
    if m.error is not None:
        reason = f"{m.error} (HTTP {m.status_code})" if m.status_code else m.error
        return Verdict(Status.CRITICAL, reason, figures)
    if m.status_code is not None and m.status_code >= 500:
        return Verdict(Status.CRITICAL, f"answered HTTP {m.status_code}", figures)

    if m.tls_expires is not None and now is not None and m.tls_expires <= now:
        figures["tls_days_left"] = round((m.tls_expires - now).total_seconds() / 86400, 1)
        return Verdict(
            Status.CRITICAL, f"TLS certificate expired on {m.tls_expires:%Y-%m-%d}", figures
        )

    warnings = []
    observed = _describe_idle(m.idle_timeout_s, m.cap_s)
    if expected_range is not None:
        low, high = expected_range
        idle = m.idle_timeout_s
        outside = idle > high if idle is not None else m.cap_s > high
        if idle is not None and idle < low:
            outside = True
        if outside:
            warnings.append(f"{observed}, expected {_range(low, high)}")
    if (
        previous_idle_s is not None
        and m.idle_timeout_s is not None
        and abs(m.idle_timeout_s - previous_idle_s) > tolerance_s
    ):
        warnings.append(
            f"idle timeout changed from {previous_idle_s:.1f} s to {m.idle_timeout_s:.1f} s"
            + _over(thresholds, "tolerance_s", f"{tolerance_s:g} s")
        )
    if m.tls_expires is not None and now is not None:
        days = (m.tls_expires - now).total_seconds() / 86400
        figures["tls_days_left"] = round(days, 1)
        if days <= cert_warn_days:
            warnings.append(
                f"TLS certificate expires in {days:.0f} days ({m.tls_expires:%Y-%m-%d})"
                + _over(thresholds, "cert_warn_days", f"{cert_warn_days} days", "within")
            )
    if warnings:
        return Verdict(Status.WARNING, "; ".join(warnings), figures)
    return Verdict(Status.OK, observed, figures)


def _describe_idle(idle_s: float | None, cap_s: float) -> str:
    if idle_s is None:
        return f"kept the idle connection open past the {cap_s:g} s cap"
    if idle_s < 0.1:
        return "closes connections right after the response"
    return f"closes idle connections after {idle_s:.1f} s"


def _range(low: float, high: float) -> str:
    return f"{low:g} s" if low == high else f"{low:g}-{high:g} s"


def _over(thresholds: Thresholds, name: str, shown: str, word: str = "more than") -> str:
    """`` (more than 5 s: this target's threshold; default 1 s)`` when one was set, else ""."""
    note = thresholds.notes(name)
    return f" ({word} {shown}: {note})" if note else ""

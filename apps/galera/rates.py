"""Rates from counters read at two moments (wsrep_local_cert_failures and the like).

A counter only grows while the server runs; a restart or ``FLUSH STATUS`` sets it back to 0,
so a reading below the previous one means it restarted in between, and what it counts now
happened since then (the part before the reset is lost, as in Prometheus' ``rate``).

Pure module: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Reading:
    """A counter's value and when it was read (seconds, any epoch shared by both readings)."""

    value: int
    at: float


def per_minute(previous: Reading | None, current: Reading | None) -> float | None:
    """The counter's increase per minute between two readings; None when it cannot be told
    (a reading missing, or no time between them)."""
    if previous is None or current is None:
        return None
    seconds = current.at - previous.at
    if seconds <= 0:
        return None
    increase = current.value - previous.value
    if increase < 0:  # reset in between: it counted from 0 since
        increase = current.value
    return increase * 60.0 / seconds


def cert_failures(variables: Mapping[str, str]) -> int | None:
    """wsrep_local_cert_failures as a count, or None when missing or not a plain count."""
    text = variables.get("wsrep_local_cert_failures") or ""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else None


def since_previous(
    count: int | None,
    read_at: float,
    before: Mapping[str, Any] | None,
    before_at: float | None,
) -> float | None:
    """Certification failures per minute since a node's facts in the previous snapshot
    (``before``: its ``cert_failures``, ``read_at`` and ``cert_failures_per_minute``;
    ``before_at``: when that snapshot was taken, for snapshots without ``read_at``).

    A reading that is the same as before (a pushing node that has not reported again) keeps
    the rate it gave then.
    """
    if count is None or not before or before.get("cert_failures") is None:
        return None
    previous_at = before.get("read_at", before_at)
    if previous_at is None:
        return None
    if previous_at == read_at:
        return before.get("cert_failures_per_minute")
    return per_minute(
        Reading(int(before["cert_failures"]), float(previous_at)), Reading(count, read_at)
    )

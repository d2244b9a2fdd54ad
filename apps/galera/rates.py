"""Rates from counters read at two moments: certification failures a minute
(``wsrep_local_cert_failures``), the share of the time between two polls a node was paused by
flow control (``wsrep_flow_control_paused_ns``), flow-control pauses it asked for
(``wsrep_flow_control_sent``).

A counter only grows while the server runs; a restart (or ``FLUSH STATUS`` for those it resets)
sets it back to 0, so a reading below the previous one means it restarted in between, and what
it counts now happened since then (the part before the reset is lost, as in Prometheus' ``rate``).

Pure module: no Django, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

NANOSECONDS = 1_000_000_000


@dataclass(frozen=True)
class Reading:
    """A counter's value and when it was read (seconds, any epoch shared by both readings)."""

    value: int
    at: float


def increase(previous: Reading | None, current: Reading | None) -> tuple[int, float] | None:
    """How much the counter grew, and in how many seconds; None when it cannot be told (a
    reading missing, or no time between them)."""
    if previous is None or current is None:
        return None
    seconds = current.at - previous.at
    if seconds <= 0:
        return None
    grown = current.value - previous.value
    if grown < 0:  # reset in between: it counted from 0 since
        grown = current.value
    return grown, seconds


def per_minute(previous: Reading | None, current: Reading | None) -> float | None:
    """The counter's increase per minute between two readings."""
    grown = increase(previous, current)
    return None if grown is None else grown[0] * 60.0 / grown[1]


def per_second(previous: Reading | None, current: Reading | None) -> float | None:
    """The counter's increase per second between two readings."""
    grown = increase(previous, current)
    return None if grown is None else grown[0] / grown[1]


def paused_share(previous: Reading | None, current: Reading | None) -> float | None:
    """The share (0..1) of the time between two readings of a nanosecond counter that it
    counted: for ``wsrep_flow_control_paused_ns``, the share of the interval paused. Readings
    are stamped when the poll began, a moment before each node answered: the share is capped
    at 1."""
    grown = increase(previous, current)
    return None if grown is None else min(1.0, grown[0] / (grown[1] * NANOSECONDS))


def count(variables: Mapping[str, str], name: str) -> int | None:
    """A counter as an int, or None when missing or not a plain count."""
    text = variables.get(name) or ""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else None


def repl_latency_s(variables: Mapping[str, str]) -> float | None:
    """The average of ``wsrep_evs_repl_latency`` (min/avg/max/stddev/samples, in seconds), or
    None when missing, unreadable, not finite, over an hour, or with no samples."""
    parts = (variables.get("wsrep_evs_repl_latency") or "").split("/")
    if len(parts) != 5 or len(variables["wsrep_evs_repl_latency"]) > 200:
        return None
    try:
        average, samples = float(parts[1]), int(parts[4])
    except ValueError:
        return None
    if samples <= 0 or not math.isfinite(average) or not 0 <= average <= 3600:
        return None
    return average


def cert_failures(variables: Mapping[str, str]) -> int | None:
    """wsrep_local_cert_failures as a count, or None when missing or not a plain count."""
    return count(variables, "wsrep_local_cert_failures")


@dataclass(frozen=True)
class Counter:
    """A counter kept in a snapshot's node facts (``key``), and the rate derived from two
    readings of it (``rate_key``, by ``measure``)."""

    key: str
    rate_key: str
    measure: Callable[[Reading | None, Reading | None], float | None]


CERT_FAILURES = Counter("cert_failures", "cert_failures_per_minute", per_minute)
FLOW_CONTROL_PAUSED = Counter("flow_control_paused_ns", "flow_control_paused_share", paused_share)
FLOW_CONTROL_SENT = Counter("flow_control_sent", "flow_control_sent_per_minute", per_minute)
# wsrep_last_committed only grows (a restart goes on from the node's position): commits a second.
LAST_COMMITTED = Counter("last_committed", "commits_per_s", per_second)


def since_previous(
    value: int | None,
    read_at: float,
    before: Mapping[str, Any] | None,
    before_at: float | None,
    counter: Counter = CERT_FAILURES,
) -> float | None:
    """The counter's rate since a node's facts in the previous snapshot (``before``: its
    ``counter.key``, ``read_at`` and ``counter.rate_key``; ``before_at``: when that snapshot
    was taken, for snapshots without ``read_at``).

    A reading that is the same as before (a pushing node that has not reported again) keeps
    the rate it gave then.
    """
    if value is None or not before or before.get(counter.key) is None:
        return None
    previous_at = before.get("read_at", before_at)
    if previous_at is None:
        return None
    if previous_at == read_at:
        return before.get(counter.rate_key)
    return counter.measure(
        Reading(int(before[counter.key]), float(previous_at)), Reading(value, read_at)
    )


def interval_since(
    read_at: float, before: Mapping[str, Any] | None, before_at: float | None
) -> float | None:
    """Seconds between a node's reading and its previous one (None without one); a reading
    that is the same as before keeps the interval it had then."""
    if not before:
        return None
    previous_at = before.get("read_at", before_at)
    if previous_at is None:
        return None
    if previous_at == read_at:
        return before.get("interval_s")
    seconds = read_at - float(previous_at)
    return seconds if seconds > 0 else None

"""A gadget's status from one reading (pure: no Django, no I/O)."""

from __future__ import annotations

from apps.lib.status import Status, Verdict


def gadget_verdict(reading: float | None, critical: float) -> Verdict:
    if reading is None:
        return Verdict(Status.UNKNOWN, "no reading")
    if reading >= critical:
        return Verdict(Status.CRITICAL, f"reading {reading:g} %")
    if reading >= 0.7 * critical:
        return Verdict(Status.WARNING, f"reading {reading:g} %")
    return Verdict(Status.OK, f"reading {reading:g} %")

"""Numbers of md arrays in words people read: sizes, speeds, durations."""

from __future__ import annotations

from django import template

from apps.raid.verdict import duration

register = template.Library()

_UNITS = ("KiB", "MiB", "GiB", "TiB", "PiB")


@register.filter
def kib(value: int | float | None) -> str:
    """1073610752 -> "1.0 TiB"."""
    if value is None:
        return "—"
    size = float(value)
    for unit in _UNITS:
        if size < 1024 or unit == _UNITS[-1]:
            return f"{size:.1f} {unit}" if unit != "KiB" else f"{size:.0f} KiB"
        size /= 1024
    return ""  # unreachable


@register.filter
def kib_per_s(value: int | None) -> str:
    """148213 -> "144.7 MiB/s"."""
    if value is None:
        return "—"
    if value >= 1024:
        return f"{value / 1024:.1f} MiB/s"
    return f"{value} KiB/s"


@register.filter
def minutes(value: float | None) -> str:
    """75.5 -> "1 h 16 min"."""
    return "—" if value is None else duration(value, decimals=1)

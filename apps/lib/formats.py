"""Figures in words people read: sizes, speeds and durations, the same on every page, reason
and email (issue 20: one formatter module).

Pure: plain numbers in, text out. The page filters (``apps/regions/templatetags/
vigil_format.py``) call these; a figure that is not known (None) is the caller's to show.
"""

from __future__ import annotations

from datetime import timedelta

IEC = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def iec_bytes(value: float) -> str:
    """'0 B', '512 B', '1.2 TiB', '250 GiB': binary units, as AWS bills and the console shows."""
    size, unit = float(value), 0
    while abs(size) >= 1024 and unit < len(IEC) - 1:
        size, unit = size / 1024, unit + 1
    return f"{size:.0f} {IEC[unit]}" if unit == 0 or abs(size) >= 100 else f"{size:.1f} {IEC[unit]}"


def kib(value: float) -> str:
    """A size counted in KiB (mdstat's blocks): 512 -> '512 KiB', 1073741824 -> '1.0 TiB'."""
    size = float(value)
    for unit in IEC[1:]:
        if size < 1024 or unit == IEC[-1]:
            return f"{size:.1f} {unit}" if unit != "KiB" else f"{size:.0f} KiB"
        size /= 1024
    return ""  # unreachable


def kib_per_s(value: int) -> str:
    """A speed counted in KiB/s (mdstat's sync speed): 148213 -> '144.7 MiB/s', 900 -> '900 KiB/s'."""
    return f"{value / 1024:.1f} MiB/s" if value >= 1024 else f"{value} KiB/s"


def mibps(value: float) -> str:
    """'4.9 MiB/s' below 10, '250 MiB/s' above."""
    return f"{value:.1f} MiB/s" if value < 10 else f"{value:.0f} MiB/s"


def number(value: float) -> str:
    """1234.5 -> '1,234.5'; at most two decimals, no trailing zeros."""
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def rough_duration(seconds: float) -> str:
    """A rough duration for a person: '~40 min', '~6 h', '~3 d'."""
    minutes = seconds / 60
    if minutes < 90:
        return f"~{max(1, round(minutes))} min"
    hours = minutes / 60
    if hours < 48:
        return f"~{round(hours)} h"
    return f"~{round(hours / 24)} d"


def interval(value: float) -> str:
    """0.42 -> '0.4 s', 62 -> '62 s', 300 -> '5 min', 5400 -> '1 h 30 min': an interval."""
    if value < 90:
        return f"{number(round(value, 1 if value < 10 else 0))} s"
    return duration(value / 60)


def duration(minutes: float, decimals: int = 0) -> str:
    """75.5 -> '1 h 16 min', 3000 -> '2 d 2 h'; under an hour, minutes with ``decimals`` places."""
    if minutes < 60:
        return f"{minutes:.{decimals}f} min"
    hours, rest = divmod(round(minutes), 60)
    if hours < 48:
        return f"{hours} h {rest} min"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h"


def minutes_label(minutes: int) -> str:
    """119 -> '119 min', 150 -> '2 h 30 min': a span of whole minutes in a reason."""
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 120 else f"{minutes} min"


def span_label(span: timedelta) -> str:
    """A window in a reason: 3 h -> '3 h', 15 min -> '15 min', 150 min -> '2 h 30 min'."""
    minutes = int(span.total_seconds() // 60)
    if minutes % 60 == 0 and minutes >= 60:
        return f"{minutes // 60} h"
    return minutes_label(minutes)

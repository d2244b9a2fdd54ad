"""When a recurring maintenance window is open: weekly days and hours in a named time zone.

Pure module: no Django, no I/O. A window opens on each of its ``days`` (0 = Monday … 6 =
Sunday) at ``start`` local time in ``tz`` and stays open ``minutes`` (it may run past
midnight, into the next day). Local times follow the zone's daylight-saving rules
(``zoneinfo``): a window at 02:30 on the night the clocks skip that hour opens at 03:30, as
``datetime`` normalises a non-existent local time.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

MAX_MINUTES = 7 * 24 * 60
DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


@dataclass(frozen=True)
class Weekly:
    days: frozenset[int]
    start: time
    minutes: int
    tz: str

    def occurrences(self, around: datetime, back_days: int = 8, ahead_days: int = 8):
        """(opens, closes) in UTC of the occurrences starting within the days around
        ``around``, oldest first."""
        zone = ZoneInfo(self.tz)
        local = around.astimezone(zone).date()
        out = []
        for offset in range(-back_days, ahead_days + 1):
            day = local + timedelta(days=offset)
            if day.weekday() not in self.days:
                continue
            opens = datetime.combine(day, self.start, tzinfo=zone).astimezone(UTC)
            opens = opens.astimezone(zone).astimezone(UTC)  # normalise skipped local times
            out.append((opens, opens + timedelta(minutes=self.minutes)))
        return out

    def describe(self) -> str:
        """``Mon, Sun at 02:00 for 120 min (Europe/Berlin)``."""
        days = ", ".join(DAY_NAMES[d] for d in sorted(self.days))
        return f"{days} at {self.start:%H:%M} for {self.minutes} min ({self.tz})"

    def open_at(self, now: datetime) -> tuple[datetime, datetime] | None:
        """The occurrence open at ``now`` (opens <= now < closes), or None."""
        return next((o for o in self.occurrences(now) if o[0] <= now < o[1]), None)

    def last_closed(self, now: datetime) -> tuple[datetime, datetime] | None:
        """The latest occurrence that closed at or before ``now``."""
        closed = [o for o in self.occurrences(now) if o[1] <= now]
        return closed[-1] if closed else None

    def next_open(self, now: datetime) -> tuple[datetime, datetime] | None:
        """The next occurrence opening after ``now``."""
        return next((o for o in self.occurrences(now) if o[0] > now), None)


def check(days: Collection[int], minutes: int, tz: str) -> dict[str, str]:
    """What is wrong with a window's schedule, per field, in words ({} when nothing)."""
    errors = {}
    if not days or any(
        not isinstance(d, int) or isinstance(d, bool) or not 0 <= d <= 6 for d in days
    ):
        errors["days"] = "Give one or more weekdays, 0 (Monday) to 6 (Sunday)."
    if not 1 <= minutes <= MAX_MINUTES:
        errors["minutes"] = f"A window lasts 1 to {MAX_MINUTES} minutes (a week)."
    try:
        if not tz or tz not in available_timezones():
            raise ZoneInfoNotFoundError(tz)
    except ZoneInfoNotFoundError:
        errors["time_zone"] = "Give an IANA time zone name, e.g. Europe/Berlin or UTC."
    return errors

"""When a recurring maintenance window is open: weekly days and hours, or a cron rule, in a
named time zone.

Pure module: no Django, no I/O. A weekly window opens on each of its ``days`` (0 = Monday …
6 = Sunday) at ``start`` local time in ``tz``; a cron window at each time its five-field rule
(minute, hour, day of month, month, day of week, as crontab(5) reads them) names in ``tz``.
Each occurrence stays open ``minutes`` (it may run past midnight). Local times follow the
zone's daylight-saving rules (``zoneinfo``): a window at 02:30 on the night the clocks skip
that hour opens at 03:30, as ``datetime`` normalises a non-existent local time.

Cron rules are expanded by ``dateutil.rrule`` (python-dateutil, already installed for
botocore and Celery, so no new dependency; croniter would be one more): the fields are
parsed here into sets, and crontab's rule that a restricted day of month and a restricted
day of week match either is an ``rruleset`` of the two.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from dateutil.rrule import DAILY, rrule, rruleset

MAX_MINUTES = 7 * 24 * 60
DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)  # at most (a leap year's)
Occurrence = tuple[datetime, datetime]


def _utc(local: datetime, zone: ZoneInfo) -> datetime:
    """A naive local time in ``zone`` as UTC; a skipped local time as the time it becomes."""
    opens = local.replace(tzinfo=zone).astimezone(UTC)
    return opens.astimezone(zone).astimezone(UTC)


class _Recurring:
    """What both kinds answer, from their ``occurrences`` around a time."""

    minutes: int

    def occurrences(self, around: datetime, back_days: int = 8, ahead_days: int = 8):
        raise NotImplementedError

    def open_at(self, now: datetime) -> Occurrence | None:
        """The occurrence open at ``now`` (opens <= now < closes), or None; of two overlapping
        ones, the one that closes last."""
        back = self.minutes // (24 * 60) + 2  # only what can still be open (a hot path)
        found = [o for o in self.occurrences(now, back, 1) if o[0] <= now < o[1]]
        return max(found, key=lambda o: o[1]) if found else None

    def last_closed(self, now: datetime) -> Occurrence | None:
        """The latest occurrence that closed at or before ``now``."""
        closed = [o for o in self.occurrences(now, ahead_days=1) if o[1] <= now]
        return max(closed, key=lambda o: o[1]) if closed else None

    def next_open(self, now: datetime) -> Occurrence | None:
        """The next occurrence opening after ``now``."""
        return next((o for o in self.occurrences(now) if o[0] > now), None)

    def between(self, start: datetime, end: datetime) -> list[Occurrence]:
        """The occurrences open at some time from ``start`` to ``end`` (a timeline's span)."""
        back = (end - start).days + MAX_MINUTES // (24 * 60) + 1
        return [o for o in self.occurrences(end, back, 0) if o[1] > start and o[0] < end]


@dataclass(frozen=True)
class Weekly(_Recurring):
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
            opens = _utc(datetime.combine(day, self.start), zone)
            out.append((opens, opens + timedelta(minutes=self.minutes)))
        return out

    def describe(self) -> str:
        """``Mon, Sun at 02:00 for 120 min (Europe/Berlin)``."""
        days = ", ".join(DAY_NAMES[d] for d in sorted(self.days))
        return f"{days} at {self.start:%H:%M} for {self.minutes} min ({self.tz})"


# crontab(5)'s fields: name, lowest, highest, names for values.
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
FIELDS = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day of month", 1, 31, ()),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 7, _WEEKDAYS),
)


#: Digits cron reads: ASCII only (str.isdigit also takes '²' and full-width digits).
_DIGITS = re.compile(r"[0-9]+", re.ASCII)


def _number(text: str) -> int:
    """ASCII digits as a number; past nine digits, one beyond every field's range (int()
    refuses over 4,300 digits, in its own words)."""
    return int(text) if len(text) <= 9 else 10**9


def _shown(text: str) -> str:
    """A field as a message quotes it: escaped (no NUL or lone surrogate) and short."""
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _value(text: str, low: int, names: tuple[str, ...]) -> int:
    lowered = text.lower()
    if lowered in names:
        return names.index(lowered) + (1 if low == 1 else 0)
    if not _DIGITS.fullmatch(text):
        raise ValueError(f"{_shown(text)} is not a number or a name")
    return _number(text)


def parse_field(text: str, low: int, high: int, names: tuple[str, ...] = ()) -> set[int] | None:
    """One cron field as the set of values it names; ``None`` for ``*`` (every value).
    ``ValueError`` names what is wrong."""
    if text == "*":
        return None
    values: set[int] = set()
    for part in text.split(","):
        span, _, step_text = part.partition("/")
        digits = _DIGITS.fullmatch(step_text) is not None
        step = _number(step_text) if digits and _number(step_text) > 0 else None
        if step_text and step is None:
            raise ValueError(f"{_shown(part)}: a step is a whole number from 1")
        if span == "*":
            first, last = low, high
        elif "-" in span:
            a, _, b = span.partition("-")
            first, last = _value(a, low, names), _value(b, low, names)
        else:
            first = _value(span, low, names)
            last = high if step else first
        if not (low <= first <= last <= high):
            raise ValueError(f"{_shown(part)}: values go from {low} to {high}, lowest first")
        values.update(range(first, last + 1, step or 1))
    return values


@dataclass(frozen=True)
class Cron(_Recurring):
    """A five-field cron rule (``0 2 1-7 * sun``: the first Sunday of each month at 02:00)."""

    expression: str
    minutes: int
    tz: str

    def _rule(self, start: datetime) -> rruleset:
        minute, hour, monthday, month, weekday = (
            parse_field(text, low, high, names)
            for text, (_, low, high, names) in zip(self.expression.split(), FIELDS, strict=True)
        )
        common = {
            "dtstart": start,
            "byminute": sorted(minute) if minute is not None else range(60),
            "byhour": sorted(hour) if hour is not None else range(24),
            "bymonth": sorted(month) if month is not None else None,
            "bysecond": 0,
        }
        # cron's day of week: 0 and 7 are Sunday; rrule's: 0 is Monday
        weekdays = sorted({(d - 1) % 7 for d in weekday}) if weekday is not None else None
        rules = rruleset()
        if monthday is not None and weekdays is not None:  # crontab(5): either matches
            rules.rrule(rrule(DAILY, bymonthday=sorted(monthday), **common))
            rules.rrule(rrule(DAILY, byweekday=weekdays, **common))
        else:
            days = {"bymonthday": sorted(monthday)} if monthday is not None else {}
            rules.rrule(rrule(DAILY, byweekday=weekdays, **days, **common))
        return rules

    def _around(self, at: datetime, back: timedelta, ahead: timedelta) -> list[Occurrence]:
        """The occurrences starting from ``back`` before ``at`` to ``ahead`` after it (in local
        time), oldest first."""
        zone = ZoneInfo(self.tz)
        local = at.astimezone(zone).replace(tzinfo=None, second=0, microsecond=0)
        lo, hi = local - back, local + ahead
        starts = sorted({_utc(t, zone) for t in self._rule(lo).between(lo, hi, inc=True)})
        return [(o, o + timedelta(minutes=self.minutes)) for o in starts]

    def occurrences(self, around: datetime, back_days: int = 8, ahead_days: int = 8):
        return self._around(around, timedelta(days=back_days), timedelta(days=ahead_days))

    def open_at(self, now: datetime) -> Occurrence | None:
        # Only the starts that can still be open (``* * * * *`` is 1,440 a day), with three
        # hours to spare for a change of the zone's offset.
        spare = timedelta(hours=3)
        found = [
            o
            for o in self._around(now, timedelta(minutes=self.minutes) + spare, spare)
            if o[0] <= now < o[1]
        ]
        return max(found, key=lambda o: o[1]) if found else None

    def next_open(self, now: datetime) -> Occurrence | None:
        """The next occurrence opening after ``now``, however far (a yearly rule). The rule's
        starts are walked from three hours before ``now`` (a change of the zone's offset) to
        three hours past the first that opens after it, not expanded over days (``* * * * *``
        is 1,440 a day)."""
        zone = ZoneInfo(self.tz)
        spare = timedelta(hours=3)
        local = now.astimezone(zone).replace(tzinfo=None, second=0, microsecond=0)
        first: datetime | None = None
        horizon: datetime | None = None
        for start in self._rule(local - spare):
            if horizon is not None and start > horizon:
                break
            opens = _utc(start, zone)
            if opens > now and (first is None or opens < first):
                first = opens
                horizon = horizon or start + 2 * spare
        return None if first is None else (first, first + timedelta(minutes=self.minutes))

    def describe(self) -> str:
        """``cron 0 2 * * sun for 120 min (Europe/Berlin)``."""
        return f"cron {self.expression} for {self.minutes} min ({self.tz})"


def check_cron(expression: str) -> str:
    """What is wrong with a cron rule, in words ("" when nothing)."""
    parts = expression.split()
    if len(parts) != len(FIELDS):
        return (
            "Give five fields: minute hour day-of-month month day-of-week, "
            'e.g. "0 2 * * sun" (Sundays at 02:00).'
        )
    values = []
    for text, (name, low, high, names) in zip(parts, FIELDS, strict=True):
        try:
            values.append(parse_field(text, low, high, names))
        except ValueError as error:
            return f"The {name} field {_shown(text)} is not one cron reads ({error})."
    _, _, monthdays, months, weekdays = values
    only_monthdays = monthdays is not None and weekdays is None  # (either, when both are)
    if only_monthdays and not any(
        min(monthdays) <= MONTH_DAYS[m - 1] for m in (months or range(1, 13))
    ):
        return "No month named has such a day (e.g. 31 in February): it would never open."
    return ""


def check(days: Collection[int], minutes: int, tz: str, cron: str = "") -> dict[str, str]:
    """What is wrong with a window's schedule, per field, in words ({} when nothing): weekly
    ``days`` (with a start), or a ``cron`` rule instead."""
    errors = {}
    if cron:
        if days:
            errors["days"] = "A cron rule names its own days: leave the weekdays empty."
        if problem := check_cron(cron):
            errors["cron"] = problem
    elif not days or any(
        not isinstance(d, int) or isinstance(d, bool) or not 0 <= d <= 6 for d in days
    ):
        errors["days"] = "Give one or more weekdays, 0 (Monday) to 6 (Sunday), or a cron rule."
    if not 1 <= minutes <= MAX_MINUTES:
        errors["minutes"] = f"A window lasts 1 to {MAX_MINUTES} minutes (a week)."
    try:
        if not tz or tz not in available_timezones():
            raise ZoneInfoNotFoundError(tz)
    except ZoneInfoNotFoundError:
        errors["time_zone"] = "Give an IANA time zone name, e.g. Europe/Berlin or UTC."
    return errors

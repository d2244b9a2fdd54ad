"""The status contract between the monitored concerns and the alert pipeline.

Every subject (file system, cluster, array, probe target) has one of four statuses and a
human reason. Pure module: no Django, no I/O, so parsers and derivations can return a
``Verdict`` directly.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    OK = "ok"
    WARNING = "warning"
    CRITICAL = "critical"
    UNKNOWN = "unknown"

    @property
    def label(self) -> str:
        return self.value.capitalize()

    @property
    def severity(self) -> int:
        """Rank for "worst of": missing data outranks a warning, a critical outranks all."""
        return _SEVERITY[self]

    @classmethod
    def ranked(cls) -> list[Status]:
        """Every status, least severe first: the one order the pages list severities in (a
        rule's minimum, the counts of a tile read worst first, the reverse)."""
        return sorted(cls, key=lambda s: s.severity)


_SEVERITY = {Status.OK: 0, Status.WARNING: 1, Status.UNKNOWN: 2, Status.CRITICAL: 3}


def worst(statuses: Iterable[Status | str]) -> Status | None:
    """The most severe of ``statuses``, or None when there are none."""
    ranked = [Status(s) for s in statuses]
    return max(ranked, key=lambda s: s.severity) if ranked else None


@dataclass(frozen=True)
class Cause:
    """A known cause that many subjects may fail for at once (a storage server, an AWS
    account-region whose access fails, an agent that stopped pushing, a whole Galera cluster).

    ``key`` names it across concerns and subjects (``raid/3/domain/storage-b``): subjects
    failing with the same key share one incident by cause and one page (apps/alerts/routing.py).
    ``label`` names it for a person: "storage server storage-b".
    """

    key: str
    label: str


def aws_access(account_id: int | None, account: str, region_code: str) -> Cause:
    """The account-region whose AWS calls fail: every subject going unknown with it (EFS file
    systems, EBS volumes) shares one incident by cause."""
    return Cause(
        f"aws/{account_id}/{region_code}/access", f"AWS access to {region_code} ({account})"
    )


@dataclass(frozen=True)
class Verdict:
    """A status with the reason a person reads, the figures behind it and, when the concern
    knows it, the cause shared with other subjects failing with it."""

    status: Status
    reason: str
    figures: dict[str, Any] = field(default_factory=dict)
    cause: Cause | None = None


def jsonable(figures: dict[str, Any]) -> dict[str, Any]:
    """A verdict's figures as JSON can keep them: numbers, text, booleans and None as they
    are (and lists of them), anything else as its text."""
    out: dict[str, Any] = {}
    for key, value in figures.items():
        if value is None or isinstance(value, bool | int | float | str):
            out[key] = value
        elif isinstance(value, list | tuple):
            out[key] = [
                v if isinstance(v, bool | int | float | str | None) else str(v) for v in value
            ]
        else:
            out[key] = str(value)
    return out

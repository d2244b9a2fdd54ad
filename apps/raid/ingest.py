"""Store one host's report: the one path shared by SSH collection, push and the demo.

Glue: ``report.assess`` (pure) reads and judges everything first, so a malformed text raises
``ParseError`` before any row changes; then arrays and members are saved and each array's
verdict goes through ``alerts.record``. Arrays that left /proc/mdstat become ``unknown``, and
so do all arrays of a host that stopped reporting (``mark_silent_hosts``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from apps import alerts
from apps.alerts.models import Transition
from apps.lib.status import Status, Verdict

from .domains import validate_rules
from .models import Array, Host, Member
from .report import ArrayFacts, assess

_COPIED = (
    "position",
    "level",
    "state",
    "read_only",
    "raid_disks",
    "active_disks",
    "size_kib",
    "disk_status",
    "sync_action",
    "sync_state",
    "sync_percent",
    "speed_kib_per_sec",
    "eta_minutes",
    "stalled",
    "headroom",
    "headroom_text",
    "domain_headroom",
    "domain_headroom_text",
)


def ingest(
    host: Host,
    mdstat_text: str,
    details: Mapping[str, str] | None = None,
    now: datetime | None = None,
) -> list[Transition]:
    """Save a report for ``host``; ParseError (nothing stored) when any text is unreadable."""
    try:
        rules = validate_rules(host.domain_rules)
    except ValueError:
        rules = {}  # the admin form validates them; a bad value set elsewhere is ignored
    report = assess(mdstat_text, details, rules, host.domain_noun)
    now = now or timezone.now()
    transitions: list[Transition] = []
    with transaction.atomic():
        # one report of a host at a time (PostgreSQL row lock; SQLite writes one at a time)
        Host.objects.select_for_update().filter(pk=host.pk).first()
        rows = {a.name: a for a in Array.objects.filter(host=host)}
        for array in rows.values():
            array.host = host
        for facts in report.arrays:
            rows[facts.name] = _save_array(host, rows.get(facts.name), facts, now)
        for facts in report.arrays:
            parent = rows[facts.parent] if facts.parent else None
            array = rows[facts.name]
            if array.parent_id != (parent.pk if parent else None):
                Array.objects.filter(pk=array.pk).update(parent=parent)
                array.parent = parent
        for facts in report.arrays:
            if moved := alerts.record(rows[facts.name], facts.verdict):
                transitions.append(moved)
        reported = {facts.name for facts in report.arrays}
        for name, array in rows.items():
            if name not in reported and array.present:
                Array.objects.filter(pk=array.pk).update(present=False, parent=None)
                gone = Verdict(Status.UNKNOWN, f"{name}: no longer in /proc/mdstat")
                if moved := alerts.record(array, gone):
                    transitions.append(moved)
        Host.objects.filter(pk=host.pk).update(
            last_report=now,
            mdstat_text=mdstat_text,
            details_text=dict(details or {}),
            last_error="",
            last_error_at=None,
        )
    host.last_report, host.last_error = now, ""
    return transitions


def _save_array(host: Host, array: Array | None, facts: ArrayFacts, now: datetime) -> Array:
    if array is None:
        array = Array(host=host, name=facts.name, region_id=host.region_id)
    for field in _COPIED:
        setattr(array, field, getattr(facts, field))
    array.region_id = host.region_id
    array.present = True
    array.last_seen = now
    # status and reason are left to alerts.record, the only writer of a status change
    if array.pk is None:
        array.save()
    else:
        array.save(update_fields=[*_COPIED, "region", "present", "last_seen"])
    Member.objects.filter(array=array).delete()
    Member.objects.bulk_create(
        Member.of(array, position, m) for position, m in enumerate(facts.members)
    )
    return array


def mark_silent_hosts(now: datetime | None = None) -> list[Transition]:
    """Arrays of hosts that have not reported within their threshold become unknown."""
    now = now or timezone.now()
    transitions = []
    hosts = Host.objects.filter(enabled=True, last_report__isnull=False)
    for host in hosts:
        if host.last_report > now - host.stale_after:
            continue
        since = timezone.localtime(host.last_report).strftime("%Y-%m-%d %H:%M %Z")
        for array in host.arrays.filter(present=True).exclude(status=Status.UNKNOWN.value):
            verdict = Verdict(
                Status.UNKNOWN, f"{array.name}: no report from {host.name} since {since}"
            )
            if moved := alerts.record(array, verdict):
                transitions.append(moved)
    return transitions

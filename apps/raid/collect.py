"""Collect and store one host's report: ``collect_over_ssh`` pulls it (``ssh.py``), and
``ingest`` stores it, the one path shared by SSH collection, push and the demo.

Glue: ``report.assess`` (pure) reads and judges everything first, so a report refused as a
whole raises ``ParseError`` before any row changes (one array's odd line only makes that
array unknown); then arrays and members are saved and each array's verdict goes through
``alerts.record``. Arrays that left /proc/mdstat become ``unknown``, and
so do all arrays of a host that stopped reporting (``mark_silent_hosts``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps import alerts
from apps.alerts.models import Transition
from apps.lib.status import Cause, Status, Verdict
from apps.regions import thresholds as region_thresholds

from . import ssh
from .disks import DiskThresholds, LeafDisk, disk_name, thresholds_from
from .domains import validate_rules
from .errors import ParseError
from .models import COUNTERS, Array, Disk, DiskReading, Host, Member
from .report import ARRAY_FACT_FIELDS, ArrayFacts, Report, assess, lost_domain
from .scrub import ScrubMemory, ScrubThresholds
from .thresholds import ArrayThresholds

log = logging.getLogger(__name__)


class TooManyArrays(Exception):
    """A report that would give its host more arrays than ``VIGIL_RAID_MAX_ARRAYS_PER_HOST``
    (present and gone together): refused whole, nothing stored."""


def check_array_limit(host: Host, kept: set[str], reported: set[str]) -> None:
    """Raise ``TooManyArrays`` when ``kept`` (the host's arrays now, gone ones too) and the
    new names of ``reported`` come to more than the setting."""
    limit = settings.VIGIL_RAID_MAX_ARRAYS_PER_HOST
    new = reported - kept
    if len(kept) + len(new) <= limit:
        return
    gone = len(kept - reported)
    raise TooManyArrays(
        f"Host {host.name} keeps at most {limit} arrays (VIGIL_RAID_MAX_ARRAYS_PER_HOST): "
        f"this report names {len(new)} new ones beside the {len(kept)} it has "
        f"({gone} of them no longer in /proc/mdstat, kept "
        f"{settings.VIGIL_RAID_GONE_ARRAY_RETENTION_DAYS} days after they were last seen, "
        "VIGIL_RAID_GONE_ARRAY_RETENTION_DAYS). Nothing was stored."
    )


def ssh_target(host: Host) -> ssh.SshTarget:
    return ssh.SshTarget(
        address=host.ssh_address,
        port=host.ssh_port,
        username=host.ssh_user,
        known_hosts=host.known_hosts,
        known_hosts_file=settings.VIGIL_RAID_SSH_KNOWN_HOSTS,
        client_key=settings.VIGIL_RAID_SSH_KEY,
        passphrase=settings.VIGIL_RAID_SSH_KEY_PASSPHRASE,
        connect_timeout=settings.VIGIL_RAID_SSH_CONNECT_TIMEOUT,
        command_timeout=settings.VIGIL_RAID_SSH_COMMAND_TIMEOUT,
        max_output=settings.VIGIL_PUSH_MAX_BYTES,
    )


def disk_thresholds() -> DiskThresholds:
    return thresholds_from(settings.VIGIL_RAID_DISK_THRESHOLDS)


def array_thresholds() -> ArrayThresholds:
    """The global defaults an array is judged with, from settings."""
    return ArrayThresholds(disk_thresholds(), scrub_thresholds())


def scrub_thresholds() -> ScrubThresholds:
    return ScrubThresholds(
        max_days=settings.VIGIL_RAID_CHECK_MAX_DAYS,
        mismatch_sectors=settings.VIGIL_RAID_MISMATCH_SECTORS,
    )


def collect_over_ssh(host: Host) -> None:
    """Pull one SSH host's report and store it; a failure is kept as the host's error."""
    try:
        collected = ssh.collect(ssh_target(host))
        ingest(
            host,
            collected.mdstat,
            collected.details,
            collected.sysfs,
            smart=collected.smart,
            devlinks=collected.devlinks,
        )
    except ssh.SshError as exc:
        log.warning("SSH collection of %s failed: %s", host, exc)
        host.collection_failed(str(exc))
        return
    except ParseError as exc:
        host.collection_failed(f"unreadable output: {exc}")
        return
    except TooManyArrays as exc:
        host.collection_failed(str(exc))
        return
    except Exception as exc:  # a bug, not the host's text: on the host page, and logged
        log.exception("Collection of RAID host %s failed", host)
        host.collection_failed(f"collection failed: {type(exc).__name__}: {exc}")
        return
    if collected.warnings:
        host.collection_failed("; ".join(collected.warnings))


_COPIED = ARRAY_FACT_FIELDS


#: What an ``Array`` row remembers of its scrubs, in ``ScrubMemory``'s order.
_SCRUB_FIELDS = (
    "sysfs_sync_action",
    "last_sync_action",
    "check_ended",
    "check_action",
    "checks_watched_since",
)


def ingest(
    host: Host,
    mdstat_text: str,
    details: Mapping[str, str] | None = None,
    sysfs: str | None = None,
    now: datetime | None = None,
    smart: Mapping[str, str] | None = None,
    devlinks: str | None = None,
    read_at: datetime | None = None,
) -> list[Transition]:
    """Save a report for ``host`` (``sysfs``: the lines of /sys/block/mdX/md/; ``smart``: disk
    name -> ``smartctl --json -a`` text; ``devlinks``: the by-id and by-path lines;
    ``read_at``: when the host read them, else ``now``); ParseError (nothing stored) when the
    report is refused as a whole (``report.assess``), TooManyArrays when it would give the
    host more arrays than ``VIGIL_RAID_MAX_ARRAYS_PER_HOST``."""
    try:
        rules = validate_rules(host.domain_rules)
    except ValueError:
        rules = {}  # the admin form validates them; a bad value set elsewhere is ignored
    now = now or timezone.now()
    read_at = read_at or now
    known = {a.name: a for a in Array.objects.filter(host=host).only("name", *_SCRUB_FIELDS)}
    memories = {
        name: ScrubMemory(*(getattr(a, field) for field in _SCRUB_FIELDS))
        for name, a in known.items()
    }
    resolve = region_thresholds.resolver("raid", host.region, array_thresholds())
    in_region = resolve(Array())  # the region's set (a new array's, and the disks' own)
    report = assess(
        mdstat_text,
        details,
        rules,
        host.domain_noun,
        sysfs=sysfs,
        smart=smart,
        devlinks=devlinks,
        thresholds=in_region.disk,
        scrubs=memories,
        scrub_thresholds=in_region.scrub,
        now=read_at,
        own_thresholds=lambda name: resolve(known[name]) if name in known else None,
    )
    return _store(host, report, mdstat_text, now, read_at)


def _store(
    host: Host, report: Report, mdstat_text: str, now: datetime, read_at: datetime
) -> list[Transition]:
    """Store a judged report in one transaction, one report of a host at a time: its disks,
    its arrays (``TooManyArrays`` past the limit), their verdicts and the host's last report;
    the transitions recorded."""
    with transaction.atomic():
        # one report of a host at a time (PostgreSQL row lock; SQLite writes one at a time)
        Host.objects.select_for_update().filter(pk=host.pk).first()
        rows = {a.name: a for a in Array.objects.filter(host=host)}
        check_array_limit(host, set(rows), {facts.name for facts in report.arrays})
        disk_ids = _save_disks(host, report, read_at)
        for array in rows.values():
            array.host = host
        _save_arrays(host, rows, report.arrays, now, disk_ids)
        _link_parents(rows, report.arrays)
        transitions = _record_arrays(host, rows, report.arrays)
        Host.objects.filter(pk=host.pk).update(
            last_report=now,
            mdstat_text=mdstat_text,
            details_text=report.detail_texts,
            last_error="",
            last_error_at=None,
        )
    host.last_report, host.last_error = now, ""
    return transitions


def _link_parents(rows: dict[str, Array], arrays: Sequence[ArrayFacts]) -> None:
    """Point each array's row at the array it is a member of, as the report says."""
    for facts in arrays:
        parent = rows[facts.parent] if facts.parent else None
        array = rows[facts.name]
        if array.parent_id != (parent.pk if parent else None):
            Array.objects.filter(pk=array.pk).update(parent=parent)
            array.parent = parent


def _record_arrays(
    host: Host, rows: dict[str, Array], arrays: Sequence[ArrayFacts]
) -> list[Transition]:
    """Record each reported array's verdict, and an array the report no longer lists as
    unknown (no longer present); the transitions written."""
    transitions: list[Transition] = []
    below = {facts.name: facts.members for facts in arrays}
    for facts in arrays:
        if moved := alerts.record(rows[facts.name], with_cause(host, facts, below)):
            transitions.append(moved)
    reported = {facts.name for facts in arrays}
    for name, array in rows.items():
        if name not in reported and array.present:
            Array.objects.filter(pk=array.pk).update(present=False, parent=None)
            gone = Verdict(Status.UNKNOWN, f"{name}: no longer in /proc/mdstat")
            if moved := alerts.record(array, gone):
                transitions.append(moved)
    return transitions


def with_cause(host: Host, facts: ArrayFacts, below: Mapping[str, tuple] | None = None) -> Verdict:
    """An array failing because of one failure domain (every lost disk under it on one
    storage server) names it as its cause: the arrays it takes down share one incident."""
    verdict = facts.verdict
    domain = lost_domain(facts.members, below) if verdict.status is not Status.OK else None
    if domain is None:
        return verdict
    key = f"raid/{host.region_id}/domain/{domain}"
    return replace(verdict, cause=Cause(key, f"{host.domain_noun} {domain}"))


_MEMBER_FIELDS = (
    "position",
    "device",
    "role",
    "slot",
    "flags",
    "state",
    "domain",
    "is_array",
    "disk_id",
)


def _save_arrays(
    host: Host,
    rows: dict[str, Array],
    reported: tuple[ArrayFacts, ...],
    now: datetime,
    disk_ids: dict[str, int] | None = None,
) -> None:
    """Copy the facts into the host's arrays and their members, writing only what changed:
    a report may hold 256 arrays and 4,096 members, and most of it is what it was a minute
    ago. ``last_seen`` is one update for all."""
    stored: dict[int, list[tuple]] = {}
    for row in (
        Member.objects.filter(array__host=host)
        .order_by("array_id", "position")
        .values_list("array_id", *_MEMBER_FIELDS)
    ):
        stored.setdefault(row[0], []).append(row[1:])
    replace = []
    for facts in reported:
        array = rows.get(facts.name)
        if array is None:
            array = rows[facts.name] = Array(host=host, name=facts.name, region_id=host.region_id)
        same = array.pk is not None and array.present and array.region_id == host.region_id
        same = same and all(getattr(array, field) == getattr(facts, field) for field in _COPIED)
        for field in _COPIED:
            setattr(array, field, getattr(facts, field))
        array.region_id = host.region_id
        array.present = True
        array.last_seen = now
        # status and reason are left to alerts.record, the only writer of a status change
        if array.pk is None:
            array.save()
        elif not same:
            array.save(update_fields=[*_COPIED, "region", "present", "last_seen"])
        members = [
            Member.of(array, position, member) for position, member in enumerate(facts.members)
        ]
        for member in members:
            member.disk_id = (disk_ids or {}).get(disk_name(member.device))
        if [tuple(getattr(m, f) for f in _MEMBER_FIELDS) for m in members] != stored.get(array.pk):
            replace.append((array, members))
    Array.objects.filter(pk__in=[rows[f.name].pk for f in reported]).update(last_seen=now)
    Member.objects.filter(array__in=[array for array, _ in replace]).delete()
    Member.objects.bulk_create((m for _, members in replace for m in members), batch_size=500)


_DISK_FIELDS = (
    "device",
    "members",
    "present",
    "model",
    "serial",
    "wwn",
    "firmware",
    "protocol",
    "device_type",
    "capacity_bytes",
    "by_id",
    "by_path",
    "iscsi_portal",
    "iscsi_target",
    "iscsi_lun",
    "domain",
    "status",
    "failing",
    "summary",
    *COUNTERS,
    "smart_text",
    "last_read",
)


def _disk_values(disk: LeafDisk, domain: str, text: str, read_at: datetime) -> dict[str, object]:
    reading = disk.reading
    iscsi = disk.links.iscsi
    values: dict[str, object] = {
        "device": disk.device,
        "members": list(disk.members),
        "present": True,
        "gone_since": None,
        "by_id": list(disk.links.by_id),
        "by_path": list(disk.links.by_path),
        "iscsi_portal": iscsi.portal if iscsi else "",
        "iscsi_target": iscsi.target if iscsi else "",
        "iscsi_lun": iscsi.lun if iscsi else None,
        "domain": domain,
        "status": disk.health.status.value,
        "failing": disk.health.failing,
        "summary": disk.health.summary[:500],
        "smart_text": text,
    }
    if reading is None:  # identity and counters stay as last read
        return values
    values.update(
        model=reading.model,
        serial=reading.serial,
        wwn=reading.wwn,
        firmware=reading.firmware,
        protocol=reading.protocol[:20],
        device_type=reading.device_type[:40],
        capacity_bytes=reading.capacity_bytes,
        smart_passed=reading.passed,
        reallocated_sectors=reading.reallocated_sectors,
        pending_sectors=reading.pending_sectors,
        offline_uncorrectable=reading.offline_uncorrectable,
        grown_defects=reading.grown_defects,
        uncorrected_errors=reading.uncorrected_errors,
        media_errors=reading.media_errors,
        percentage_used=reading.percentage_used,
        temperature_c=reading.temperature_c,
        power_on_hours=reading.power_on_hours,
        last_read=read_at,
    )
    return values


def _save_disks(host: Host, report: Report, read_at: datetime) -> dict[str, int]:
    """The disks under the arrays, found again by their identity (a renamed sdc is the same
    row), written only where something changed; their counters kept in ``DiskReading`` when
    they change and at least every ``VIGIL_RAID_DISK_HISTORY_MINUTES``. Disks of the host
    that the report no longer has are kept, not present, since then (``gone_since``: they expire
    with gone arrays, ``VIGIL_RAID_GONE_ARRAY_RETENTION_DAYS``). Returns kernel name -> row id."""
    rows = {d.key: d for d in Disk.objects.filter(host=host)}
    domains = {m.device: m.domain for a in report.arrays for m in a.members if m.domain}
    every = timedelta(minutes=settings.VIGIL_RAID_DISK_HISTORY_MINUTES)
    ids: dict[str, int] = {}
    history = []
    for disk in report.disks.values():
        row = rows.get(disk.key)
        domain = next((domains[m] for m in disk.members if m in domains), "")
        values = _disk_values(disk, domain, report.smart_texts.get(disk.device, ""), read_at)
        before = tuple(getattr(row, f) for f in COUNTERS) if row is not None else None
        if row is None:
            row = Disk.objects.create(host=host, key=disk.key, first_seen=read_at, **values)
        elif any(getattr(row, name) != value for name, value in values.items()):
            for name, value in values.items():
                setattr(row, name, value)
            row.save(update_fields=list(values))
        ids[disk.device] = row.pk
        if disk.reading is None or not disk.reading.has_health:
            continue
        # the row's counters are those of its last kept reading unless they changed since
        counters = tuple(getattr(row, f) for f in COUNTERS)
        due = row.kept_at is None or read_at - row.kept_at >= every
        if due or counters != before:
            history.append(
                DiskReading(
                    disk=row,
                    read_at=read_at,
                    status=row.status,
                    **dict(zip(COUNTERS, counters, strict=True)),
                )
            )
            row.kept_at = read_at
    DiskReading.objects.bulk_create(history)
    Disk.objects.filter(pk__in=[r.disk_id for r in history]).update(kept_at=read_at)
    gone = [row.pk for row in rows.values() if row.present and row.pk not in ids.values()]
    Disk.objects.filter(pk__in=gone).update(present=False, gone_since=read_at)
    return ids


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
                Status.UNKNOWN,
                f"{array.name}: no report from {host.name} since {since}",
                cause=Cause(f"raid/host/{host.pk}/silent", f"host {host.name}: no report"),
            )
            if moved := alerts.record(array, verdict):
                transitions.append(moved)
    return transitions

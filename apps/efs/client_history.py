"""Which client: each NFS client's share of a file system's reads, writes and metadata operations
over a range, read as aggregates in SQL (one ``GROUP BY`` over the clients' hours, ``NfsHour``,
one sum of CloudWatch's minutes, both from the hour the range starts in), and set beside CloudWatch's totals on the same footing (docs/architecture.md,
"EFS from the clients' side")."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import (
    Case,
    Count,
    F,
    FloatField,
    Max,
    Min,
    Q,
    QuerySet,
    Sum,
    TextField,
    Value,
    When,
)
from django.db.models.functions import Cast, Least
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.html import escape
from django.utils.safestring import mark_safe

from . import clients, pricing
from .history import EpochSeconds, minute_retention_start
from .models import (
    FileSystem,
    MetricHour,
    MetricMinute,
    NfsClient,
    NfsHour,
    NfsMount,
    NfsSample,
    NfsTotal,
)

KINDS = ("read", "write", "metadata")
# the per-hour columns the page sums: the mount counters, one column each
_SUMS = clients.COUNTERS
_CLOUDWATCH = (
    "data_read_bytes",
    "data_read_count",
    "data_write_bytes",
    "data_write_count",
    "metadata_bytes",
    "metadata_count",
    "metered_bytes",
)


TOP = 20  # clients shown one by one; the rest are summed in one row
NAMES = 5  # clients named in a grouped finding


@dataclass
class ClientRow:
    client_id: int | None
    name: str
    totals: dict[str, int]
    last_push: datetime | None
    stale: bool = False
    share: dict[str, float] = field(default_factory=dict)
    per_op: dict[str, dict[str, float | None]] = field(default_factory=dict)
    cells: dict[str, Any] = field(default_factory=dict)  # the page's figures, as text
    #: Per operation by name since its mounts were mounted (``clients.per_operation``).
    operations: list[dict[str, Any]] = field(default_factory=list)
    clients: int = 1  # the "others" row: how many


def cloudwatch_totals(
    fs: FileSystem, start: datetime, end: datetime, now: datetime
) -> tuple[dict, datetime | None]:
    """CloudWatch's sums over ``[start, end)``: hours before the minute retention, minutes
    after it (as ``history.load_series`` splits them); and the end of the newest period
    summed (CloudWatch's minutes settle some minutes after the clients push theirs)."""
    split = minute_retention_start(now)
    sums = {name: Sum(name) for name in _CLOUDWATCH}
    out = dict.fromkeys(_CLOUDWATCH)
    until = None
    parts = []
    if start < split:
        rows = MetricHour.objects.filter(filesystem=fs, ts__gte=start, ts__lt=min(end, split))
        parts.append((rows, timedelta(hours=1)))
    if end > split:
        rows = MetricMinute.objects.filter(filesystem=fs, ts__gte=max(start, split), ts__lt=end)
        parts.append((rows, timedelta(minutes=1)))
    for rows, period in parts:
        found = rows.aggregate(newest=Max("ts"), **sums)
        if (newest := found.pop("newest")) is not None:
            until = newest + period  # the minutes, when both, are the later part
        for name, value in found.items():
            if value is not None:
                out[name] = (out[name] or 0) + value
    return out, until


def _clients_metered(totals: dict[str, float], metering) -> tuple[float, float]:
    """The clients' operations as EFS meters them (MeteredIOBytes: reads, metadata reads too,
    at one-third), as a range: a client's counters tell neither each operation's size nor
    whether a metadata operation read or wrote, so the least takes every metadata operation as
    a read and the most as a write, each at the 4 KiB minimum."""
    discount = metering["read_discount"].value
    r_low, r_high = clients.metered_range(totals["read_ops"], totals["read_bytes"], 0, metering)
    w_low, w_high = clients.metered_range(totals["write_ops"], totals["write_bytes"], 0, metering)
    metadata = totals["metadata_ops"] * metering["metadata_minimum_bytes"].value
    return (r_low + metadata) / discount + w_low, r_high / discount + w_high + metadata


def client_shares(
    fs: FileSystem, start: datetime, end: datetime, now: datetime, *, cloudwatch_alone: bool = True
) -> dict:
    """Each client's totals and share of the file system's over ``(start, end]``, the top
    ``TOP`` clients first and the rest summed in one row; the clients' sum against CloudWatch's;
    stale clients; per-operation times, retransmissions and timeouts; mount options against
    AWS's; slow lookups and failed locks.

    A file system no client mounts or counted on costs one query: its mounts' options and
    trapped clients are not looked for, nor CloudWatch's totals unless ``cloudwatch_alone``
    (the API shows them; the page, which shows nothing to compare them with, does not)."""
    stale_after = now - timedelta(minutes=settings.VIGIL_EFS_CLIENT_STALE_MINUTES)
    ranked = ranked_clients(fs, start, end, now)
    mounted = NfsMount.objects.filter(filesystem=fs)
    rows = ranked.rows + _idle_rows(mounted, ranked)
    if ranked.clients > len(rows):
        rows.append(_others(rows, ranked))
    for row in rows[len(ranked.rows) :]:  # the ranked ones are finished already
        _finish(row, ranked.totals, stale_after)
    warn = settings.VIGIL_EFS_CLIENT_LOOKUP_WARN_SECONDS
    any_mounts = bool(ranked.mounting)
    stale = _stale_rows(mounted, stale_after) if ranked.stale else []
    lookups, locks = _lock_trap(mounted, warn) if any_mounts else ([], [])
    since = counted_since(fs, hour_of(start), now) if ranked.counted else hour_of(start)
    if ranked.clients or cloudwatch_alone:
        cloudwatch, cloudwatch_until = cloudwatch_totals(fs, since, end, now)
    else:
        cloudwatch, cloudwatch_until = dict.fromkeys(_CLOUDWATCH), None
    compared = _counted_until(fs, ranked.totals, cloudwatch_until, end)
    metering = pricing.metering_table()
    low, high = _clients_metered(compared, metering)
    return {
        "rows": rows,
        "clients": ranked.clients,
        "totals": ranked.totals,
        "cloudwatch": cloudwatch,
        "cloudwatch_until": cloudwatch_until,
        "compared": compared,  # the clients' totals to ``cloudwatch_until``
        "metered_low": low,
        "metered_high": high,
        "stale": stale,
        "stale_more": max(0, ranked.stale - TOP),
        "findings": _option_groups(mounted) if any_mounts else [],
        "slow_lookups": lookups,
        "failed_locks": locks[:TOP],
        "failed_locks_more": max(0, len(locks) - TOP),
        "lookup_warn_seconds": warn,
        "data_minimum_kib": metering["data_minimum_bytes"].value / 1024,
        "metadata_minimum_kib": metering["metadata_minimum_bytes"].value / 1024,
        "read_discount": metering["read_discount"].value,
        "start": since,  # what both sums count from
        "range_start": hour_of(start),
    }


def _counted_until(
    fs: FileSystem, totals: dict[str, int], until: datetime | None, end: datetime
) -> dict[str, int]:
    """The clients' ``totals`` less what they counted after ``until`` (CloudWatch's newest
    period: it settles minutes after the clients push), so that both sums end together: the
    intervals that end after it (``NfsSample``), each in the part of its length past ``until``
    (an interval counts evenly over its length), one sum in SQL."""
    if until is None or until >= end:
        return totals
    past = (EpochSeconds("time") - Value(until.timestamp())) / F("seconds")
    part = Case(
        When(seconds__gt=0, then=Least(Value(1.0), past)),
        default=Value(1.0),
        output_field=FloatField(),
    )
    later = NfsSample.objects.filter(filesystem=fs, time__gt=until, time__lte=end).aggregate(
        **{name: Sum(F(name) * part, output_field=FloatField()) for name in _SUMS}
    )
    return {name: totals[name] - round(later[name] or 0) for name in _SUMS}


def counted_since(fs: FileSystem, start: datetime, now: datetime) -> datetime:
    """When the clients' counts over a range from the hour ``start`` begin: ``start`` while
    some client counted across it, else (agents installed, or ``make run`` started, within the
    range) the first push that counted anything: the baseline of the first interval
    (``NfsSample``: its end less its length), to the minute while CloudWatch's minutes are kept,
    that interval's hour once only hours are. CloudWatch's sums are taken from there too."""
    first_hour = (
        NfsHour.objects.filter(filesystem=fs, hour__gte=start)
        .order_by("hour")
        .values_list("hour", flat=True)
        .first()
    ) or start
    first = (
        NfsSample.objects.filter(filesystem=fs, time__gte=first_hour)
        .order_by("time")
        .values_list("time", "seconds")
        .first()
    )
    if first is None or first[0] >= first_hour + timedelta(hours=1):
        return first_hour  # its minutes expired: the hour is all that is known
    opened = first[0] - timedelta(seconds=first[1])
    if opened <= start:
        return start
    if opened < minute_retention_start(now):
        return first_hour
    return opened.replace(second=0, microsecond=0)


@dataclass
class Ranked:
    """Clients ranked by bytes moved over a range: the ``limit`` from ``offset`` on, named,
    with the file system's sums and counts (``ranked_clients``)."""

    rows: list[ClientRow]
    totals: dict[str, int]
    counted: int  # clients that counted anything in the range
    mounting: int  # clients that mount the file system
    stale: int  # of those, the ones that stopped pushing
    offset: int = 0

    @property
    def clients(self) -> int:
        return max(self.mounting, self.counted)


def ranked_clients(
    fs: FileSystem, start: datetime, end: datetime, now: datetime, *, limit: int = TOP,
    offset: int = 0,
) -> Ranked:  # fmt: skip
    """The clients that counted anything over ``(start, end]``, by bytes moved, ``limit`` of
    them from ``offset`` on (the page's top, or a page of them all), each with its share and
    figures; one query (``_top_clients``)."""
    stale_after = now - timedelta(minutes=settings.VIGIL_EFS_CLIENT_STALE_MINUTES)
    found, totals, counted, counts = _top_clients(
        fs.pk, hour_of(start), end, now, stale_after, limit=limit, offset=offset
    )
    rows = [
        ClientRow(
            g["client_id"],
            g["hostname"] or g["identity"],
            {name: int(g[name] or 0) for name in _SUMS},
            g["last_push"],
        )
        for g in found
    ]
    for row in rows:
        _finish(row, totals, stale_after)
    _add_operations(fs, rows)
    return Ranked(rows, totals, counted, counts["mounting"], counts["stale"], offset)


def _add_operations(fs: FileSystem, rows: list[ClientRow]) -> None:
    """Each row's operations by name (READ, WRITE, GETATTR, LOOKUP, ...) from its mounts of the
    file system as of their last push: one query for the rows shown, not for every client."""
    by_client: dict[int, list[dict]] = {}
    ids = [r.client_id for r in rows]
    for client_id, ops in NfsMount.objects.filter(filesystem=fs, client_id__in=ids).values_list(
        "client_id", "ops"
    ):
        by_client.setdefault(client_id, []).append(ops or {})
    for row in rows:
        row.operations = clients.per_operation(by_client.get(row.client_id, []))
        # its table's rows as HTML: some 160 cells for 20 rows cost the template more than
        # working them out (bench/nfs_clients.py), as _cells has the rest. Only the operation's
        # name is the agent's text, escaped; the figures are formatted numbers (format_html
        # escaped each of them too: a fifth of the clients' section's CPU).
        row.cells["operations"] = mark_safe(
            "".join(
                f'<tr><th scope="row">{escape(o["op"])}</th><td>{o["ops"]:,}</td>'
                f"<td>{o['rtt_ms']:.1f} / {o['execute_ms']:.1f}</td></tr>"
                for o in row.operations
            )
        )


def _idle_rows(mounted: QuerySet, ranked: Ranked) -> list[ClientRow]:
    """Clients that mount the file system but counted nothing in the range, after the ranked
    ones while there is room in the top: shown with zeros."""
    room = TOP - len(ranked.rows)
    if room <= 0 or ranked.mounting <= len(ranked.rows):
        return []
    shown = [r.client_id for r in ranked.rows]
    idle = (
        NfsClient.objects.filter(pk__in=mounted.values("client_id"))
        .exclude(pk__in=shown)
        .order_by("hostname", "identity")
        .values_list("pk", "identity", "hostname", "last_push")[:room]
    )
    return [
        ClientRow(pk, hostname or identity, dict.fromkeys(_SUMS, 0), last_push)
        for pk, identity, hostname, last_push in idle
    ]


def _others(rows: list[ClientRow], ranked: Ranked) -> ClientRow:
    """The clients not shown one by one, summed in one row."""
    rest = {name: ranked.totals[name] - sum(r.totals[name] for r in rows) for name in _SUMS}
    others = ranked.clients - len(rows)
    return ClientRow(None, f"{others} other clients", rest, None, clients=others)


def _finish(row: ClientRow, totals: dict[str, int], stale_after: datetime) -> None:
    """A row's share of the file system's totals, its times per operation, its page cells."""
    row.stale = row.client_id is not None and (row.last_push is None or row.last_push < stale_after)
    row.share = {
        name: (row.totals[name] / totals[name]) if totals[name] else 0.0
        for name in ("read_bytes", "write_bytes", "read_ops", "write_ops", "metadata_ops")
    }
    row.per_op = {
        kind: {
            "ops": row.totals[f"{kind}_ops"],
            "rtt_ms": _per(row.totals[f"{kind}_rtt_ms"], row.totals[f"{kind}_ops"]),
            "execute_ms": _per(row.totals[f"{kind}_execute_ms"], row.totals[f"{kind}_ops"]),
        }
        for kind in KINDS
    }
    row.cells = _cells(row)


def _stale_rows(mounted: QuerySet, stale_after: datetime) -> list[ClientRow]:
    """The first ``TOP`` clients of the file system that stopped pushing, the longest silent
    first."""
    silent = (
        NfsClient.objects.filter(pk__in=mounted.values("client_id"), last_push__lt=stale_after)
        .order_by("last_push")
        .values_list("pk", "identity", "hostname", "last_push")[:TOP]
    )
    return [
        ClientRow(pk, hostname or identity, {}, last_push, stale=True)
        for pk, identity, hostname, last_push in silent
    ]


def _option_groups(mounted: QuerySet) -> list[dict[str, Any]]:
    """The mounts' options against AWS's: one row per distinct set (a fleet mounts alike),
    grouped as text (comparing JSON values was most of the query's time at 1,000 clients),
    each set judged once; findings grouped with how many mounts have them and a few names."""
    findings: dict[tuple[str, str], dict[str, Any]] = {}
    option_sets = (
        mounted.annotate(text=Cast("options", TextField()))
        .values("text", "version")
        .annotate(mounts=Count("id"), example=Min("client__hostname"))
        .order_by()
    )
    for group in option_sets:
        options = json.loads(group["text"]) if group["text"] else {}
        for f in clients.option_findings(options or {}, group["version"]):
            entry = findings.setdefault(
                (f.option, f.have), {"finding": f, "mounts": 0, "names": []}
            )
            entry["mounts"] += group["mounts"]
            if group["example"] and len(entry["names"]) < NAMES:
                entry["names"].append(group["example"])
    return sorted(findings.values(), key=lambda g: -g["mounts"])


def _lock_trap(mounted: QuerySet, warn: float) -> tuple[list[dict], list[dict]]:
    """The lock trap of the clients whose last push said so (columns kept at each push): slow
    lookups grouped by server and address, the most clients first; locks that did not come."""
    lookups: dict[tuple[str, str], dict[str, Any]] = {}
    locks: list[dict[str, Any]] = []
    trapped = (
        NfsClient.objects.filter(pk__in=mounted.values("client_id"))
        .filter(Q(slowest_lookup__gt=warn) | Q(stuck_locks__gt=0))
        .values_list("identity", "hostname", "lookups", "locks")
    )
    for identity, hostname, c_lookups, c_locks in trapped:
        name = hostname or identity
        for lookup in c_lookups or []:
            reverse = lookup.get("reverse_seconds") or 0
            forward = lookup.get("forward_seconds") or 0
            if max(reverse, forward) <= warn:
                continue
            group = lookups.setdefault(
                (lookup.get("server", ""), lookup.get("address", "")),
                {"server": lookup.get("server"), "address": lookup.get("address"),
                 "reverse_seconds": 0.0, "forward_seconds": 0.0, "clients": 0, "names": []},
            )  # fmt: skip
            group["reverse_seconds"] = max(group["reverse_seconds"], reverse)
            group["forward_seconds"] = max(group["forward_seconds"], forward)
            group["clients"] += 1
            if len(group["names"]) < NAMES:
                group["names"].append(name)
        locks += [{"name": name, **lock} for lock in c_locks or [] if not lock.get("ok")]
    return sorted(lookups.values(), key=lambda g: -g["clients"]), locks


def _top_clients(
    fs_id: int, start: datetime, end: datetime, now: datetime, stale_after: datetime, *,
    limit: int = TOP, offset: int = 0,
) -> tuple[list[dict], dict, int, dict]:  # fmt: skip
    """The ``limit`` clients from ``offset`` on by bytes moved with their sums over ``[start, end]`` (``start`` an
    hour), the file system's sums, how many clients counted anything, and how many mount it
    (``mounting``) and stopped pushing before ``stale_after`` (``stale``), in one query (window
    functions over the clients; PostgreSQL and SQLite alike). A range to now reads each
    client's running totals less its opening ones (one row per client, ``_since``); one that
    ends earlier sums its hours (one row per client and hour, ``_between``)."""
    q = connection.ops.quote_name
    adapt = connection.ops.adapt_datetimefield_value
    if end >= now:
        per_client, params = _since(fs_id, adapt(start))
    else:
        per_client, params = _between(fs_id, adapt(start), adapt(end))
    names = ", ".join(q(n) for n in _SUMS)
    overall = ", ".join(f"SUM({q(n)}) OVER () AS {q('all_' + n)}" for n in _SUMS)
    moved = f"{q('read_bytes')} + {q('write_bytes')}"
    top = (
        f"SELECT {q('client_id')}, {names}, {overall}, COUNT(*) OVER () AS {q('clients')}, "
        f"{moved} AS {q('moved')} FROM ({per_client}) r "
        f"ORDER BY {moved} DESC, {q('client_id')} LIMIT {int(limit)} OFFSET {int(offset)}"
    )
    # Their names joined to the TOP rows (not to every client), and the counts of the clients
    # mounting it beside them (one row of NULLs when none counted): no other round trip.
    client, mount = q(NfsClient._meta.db_table), q(NfsMount._meta.db_table)
    named = (
        f"SELECT t.*, c.{q('identity')}, c.{q('hostname')}, c.{q('last_push')} FROM ({top}) t "
        f"JOIN {client} c ON c.{q('id')} = t.{q('client_id')}"
    )
    counts = (
        f"SELECT COUNT(*) AS {q('mounting')}, COALESCE(SUM(CASE WHEN {q('last_push')} < %s "
        f"THEN 1 ELSE 0 END), 0) AS {q('stale')} FROM {client} WHERE {q('id')} IN "
        f"(SELECT {q('client_id')} FROM {mount} WHERE {q('filesystem_id')} = %s)"
    )
    sql = (
        f"SELECT k.*, n.* FROM ({counts}) k LEFT JOIN ({named}) n ON 1 = 1 "
        f"ORDER BY n.{q('moved')} DESC, n.{q('client_id')}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [adapt(stale_after), fs_id, *params])
        columns = [c[0] for c in cursor.description]
        found = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    mounted = {"mounting": int(found[0]["mounting"]), "stale": int(found[0]["stale"])}
    found = [row for row in found if row["client_id"] is not None]
    for row in found:
        row["last_push"] = _as_datetime(row["last_push"])
    if not found:
        return [], dict.fromkeys(_SUMS, 0), 0, mounted
    totals = {n: int(found[0][f"all_{n}"] or 0) for n in _SUMS}
    return found, totals, int(found[0]["clients"]), mounted


def _between(fs_id: int, start: Any, end: Any) -> tuple[str, list]:
    """Each client's sums over the hours ``[start, end]``: one row per client that counted."""
    q = connection.ops.quote_name
    sums = ", ".join(f"SUM({q(n)}) AS {q(n)}" for n in _SUMS)
    sql = (
        f"SELECT {q('client_id')}, {sums} FROM {q(NfsHour._meta.db_table)} "
        f"WHERE {q('filesystem_id')} = %s AND {q('hour')} >= %s AND {q('hour')} <= %s "
        f"GROUP BY {q('client_id')}"
    )
    return sql, [fs_id, start, end]


def _since(fs_id: int, start: Any) -> tuple[str, list]:
    """Each client's counts since the hour ``start``: its running totals (``NfsTotal``) less the
    opening totals of its first hour row from ``start`` on; one row per client that counted
    (one with such a row). Most clients push every hour: their row at ``start`` is found by one
    range scan of the hours' unique index; only the others look for their first later hour
    (PostgreSQL: a ``LATERAL`` subquery skipped where the row at ``start`` was found; SQLite:
    a correlated ``MIN``)."""
    q = connection.ops.quote_name
    hour, total = q(NfsHour._meta.db_table), q(NfsTotal._meta.db_table)
    fs, client = q("filesystem_id"), q("client_id")
    counts = ", ".join(
        f"t.{q(n)} - COALESCE(a.{q('opening_' + n)}, l.{q('opening_' + n)}, t.{q(n)}) AS {q(n)}"
        for n in _SUMS
    )
    same = f"h.{fs} = t.{fs} AND h.{client} = t.{client}"
    if connection.vendor == "postgresql":
        later = (
            f"LEFT JOIN LATERAL (SELECT h.* FROM {hour} h WHERE a.{q('id')} IS NULL AND {same} "
            f"AND h.{q('hour')} >= %s ORDER BY h.{q('hour')} LIMIT 1) l ON TRUE"
        )
    else:
        later = (
            f"LEFT JOIN {hour} l ON a.{q('id')} IS NULL AND l.{fs} = t.{fs} "
            f"AND l.{client} = t.{client} AND l.{q('hour')} = (SELECT MIN(h.{q('hour')}) "
            f"FROM {hour} h WHERE {same} AND h.{q('hour')} >= %s)"
        )
    sql = (
        f"SELECT t.{client}, {counts} FROM {total} t "
        f"LEFT JOIN {hour} a ON a.{fs} = t.{fs} AND a.{client} = t.{client} "
        f"AND a.{q('hour')} = %s {later} "
        f"WHERE t.{fs} = %s AND (a.{q('id')} IS NOT NULL OR l.{q('id')} IS NOT NULL)"
    )
    return sql, [start, start, fs_id]


def client_counts(filesystems: QuerySet, now: datetime) -> dict[int, tuple[int, int]]:
    """File system pk -> (its clients still reporting, its clients that stopped), in one
    aggregate query (the region panel, ``/metrics``)."""
    since = now - timedelta(minutes=settings.VIGIL_EFS_CLIENT_STALE_MINUTES)
    rows = (
        NfsMount.objects.filter(filesystem__in=filesystems.values("pk"))
        .values("filesystem_id")
        .annotate(
            reporting=Count("client", filter=Q(client__last_push__gte=since), distinct=True),
            stale=Count("client", filter=Q(client__last_push__lt=since), distinct=True),
        )
        .order_by()
    )
    return {r["filesystem_id"]: (r["reporting"], r["stale"]) for r in rows}


def _as_datetime(value: datetime | str | None) -> datetime | None:
    """A raw row's datetime as the ORM reads it: SQLite's come naive (UTC) or as text."""
    if isinstance(value, str):
        value = parse_datetime(value)
    if value is not None and timezone.is_naive(value):
        value = timezone.make_aware(value, UTC)
    return value


def hour_of(moment: datetime) -> datetime:
    """The start of the hour ``moment`` is in: the clients' totals are kept by hour, so a range
    is read from the hour its start is in, CloudWatch's too (the same span for both)."""
    return moment.replace(minute=0, second=0, microsecond=0)


def _cells(row: ClientRow) -> dict[str, Any]:
    """The page's figures of a row as text: operations with thousands separators, shares in
    whole percent, times per operation to a tenth of a millisecond. Formatted here, not by
    ``floatformat`` in the template: some 200 figures for 21 rows were a fifth of the page's
    CPU at 1,000 clients (bench/nfs_clients.py)."""
    totals, share = row.totals, row.share
    out = {name: f"{totals[name]:,}" for name in ("read_ops", "write_ops", "metadata_ops")}
    out |= {f"{name}_pct": f"{round(share[name] * 100)}" for name in share}
    out["retrans"], out["timeouts"] = f"{totals['retrans']:,}", f"{totals['timeouts']:,}"
    out["per_op"] = [
        f"{kind} {t['rtt_ms']:.1f} / {t['execute_ms']:.1f}"
        for kind, t in row.per_op.items()
        if t["ops"]
    ]
    return out


def _per(total_ms: int, ops: int) -> float | None:
    return total_ms / ops if ops else None

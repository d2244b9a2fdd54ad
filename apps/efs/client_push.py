"""Glue for an NFS client's push (agents/vigil-nfs-push): check its fields, parse its
mountstats, tie each mount to an EFS file system, turn its counters into increases since its
last push and store them (docs/architecture.md, "EFS from the clients' side").

The push's fields are outside text: bounded and checked here before anything is stored; a push
that cannot be read changes nothing (``PushRefused``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.cache import cache
from django.db import connection, transaction

from . import clients
from .clients import COUNTERS
from .models import ClientKey, FileSystem, NfsClient, NfsHour, NfsMount, NfsSample, NfsTotal
from .parse_mountstats import Mount, ParseError, parse

MOUNT_TARGETS_KEY = "vigil:efs:mount-targets"
MAX_LOOKUPS = 64  # servers a client may report lookups of
MAX_LOCKS = 64
MAX_TUNNELS = 256  # efs-utils tunnels a client may report (its NFS mounts are at most 256)
_FS_ID = re.compile(r"^fs-[0-9a-f]{8,40}$")
_HOSTNAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,252})$")
_INSTANCE = re.compile(r"^i-[0-9a-f]{8,17}$")
_ADDRESS = re.compile(r"^[0-9A-Fa-f:.]{2,45}$")


class PushRefused(ValueError):
    """A push that cannot be stored; the message says what is wrong with it."""


@dataclass(frozen=True)
class Stored:
    client: NfsClient
    mounts: int
    attributed: int
    samples: int


def _text(data: dict, name: str, limit: int, pattern: re.Pattern | None = None) -> str:
    value = data.get(name) or ""
    if not isinstance(value, str) or len(value) > limit:
        raise PushRefused(f"'{name}' must be text of at most {limit} characters")
    value = value.strip()
    if value and pattern is not None and not pattern.match(value):
        raise PushRefused(f"'{name}' is not a valid {name.replace('_', ' ')}: {value[:64]!r}")
    return value


def _number(item: dict, name: str) -> float | None:
    value = item.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 3600:
        raise PushRefused(f"'{name}' must be seconds between 0 and 3600")
    return float(value)


def _lookups(data: Any) -> list[dict]:
    """The agent's timed lookups: [{"server", "address", "reverse_seconds", "reverse_name",
    "forward_seconds", "forward_ok"}], checked and cut to what is kept."""
    if data in (None, ""):
        return []
    if not isinstance(data, list) or len(data) > MAX_LOOKUPS:
        raise PushRefused(f"'lookups' must be a list of at most {MAX_LOOKUPS} objects")
    out = []
    for item in data:
        if not isinstance(item, dict):
            raise PushRefused("each of 'lookups' must be an object")
        address = _text(item, "address", 45, _ADDRESS)
        out.append(
            {
                "server": _text(item, "server", 253, _HOSTNAME),
                "address": address,
                "reverse_seconds": _number(item, "reverse_seconds"),
                "reverse_name": _text(item, "reverse_name", 253),
                "forward_seconds": _number(item, "forward_seconds"),
                "forward_ok": bool(item.get("forward_ok")),
            }
        )
    return out


def _locks(data: Any) -> list[dict]:
    """The opt-in lock tries: [{"mountpoint", "seconds", "ok"}]."""
    if data in (None, ""):
        return []
    if not isinstance(data, list) or len(data) > MAX_LOCKS:
        raise PushRefused(f"'locks' must be a list of at most {MAX_LOCKS} objects")
    out = []
    for item in data:
        if not isinstance(item, dict):
            raise PushRefused("each of 'locks' must be an object")
        out.append(
            {
                "mountpoint": _text(item, "mountpoint", 1024),
                "seconds": _number(item, "seconds"),
                "ok": bool(item.get("ok")),
            }
        )
    return out


def read_tunnels(data: Any) -> tuple[clients.Tunnel, ...]:
    """efs-utils' tunnels of a push (``"tunnels": [{"filesystem_id", "port", "mountpoint"}]``,
    from its state files' names and JSON): bounded and checked as the rest of it."""
    items = data.get("tunnels") if isinstance(data, dict) else None
    if items in (None, ""):
        return ()
    if not isinstance(items, list) or len(items) > MAX_TUNNELS:
        raise PushRefused(f"'tunnels' must be a list of at most {MAX_TUNNELS} objects")
    out = []
    for item in items:
        if not isinstance(item, dict):
            raise PushRefused("each of 'tunnels' must be an object")
        port = item.get("port")
        if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
            raise PushRefused("a tunnel's 'port' must be a number from 1 to 65535")
        fs_id = _text(item, "filesystem_id", 43, _FS_ID)
        if not fs_id:
            raise PushRefused("a tunnel needs its 'filesystem_id'")
        out.append(clients.Tunnel(fs_id, port, _text(item, "mountpoint", 1024)))
    return tuple(out)


def read_push(data: Any) -> tuple[str, str, tuple[Mount, ...], list[dict], list[dict]]:
    """(hostname, instance id, NFS mounts, lookups, locks) of a push; ``PushRefused``."""
    if not isinstance(data, dict):
        raise PushRefused("Send a JSON object with 'hostname' and 'mountstats'")
    hostname = _text(data, "hostname", 253, _HOSTNAME)
    instance_id = _text(data, "instance_id", 32, _INSTANCE)
    if not hostname and not instance_id:
        raise PushRefused("'hostname' or 'instance_id' is needed to name the client")
    text = data.get("mountstats")
    if not isinstance(text, str):
        raise PushRefused("'mountstats' must be the text of /proc/self/mountstats")
    try:
        mounts = parse(text)
    except ParseError as exc:
        raise PushRefused(f"unreadable mountstats: {exc}") from None
    return hostname, instance_id, mounts, _lookups(data.get("lookups")), _locks(data.get("locks"))


def mount_targets() -> dict[str, str]:
    """Every live file system's mount target addresses: address -> file system id, kept in the
    cache a minute (a push from a client that mounts by address reads it)."""
    found = cache.get(MOUNT_TARGETS_KEY)
    if found is None:
        rows = FileSystem.objects.filter(deleted__isnull=True).values_list(
            "filesystem_id", "mount_target_addresses"
        )
        found = {address: fs_id for fs_id, addresses in rows for address in addresses or []}
        cache.set(MOUNT_TARGETS_KEY, found, 60)
    return found


def _attribute(
    mount: Mount, by_address: dict[str, str] | None, tunnels: tuple[clients.Tunnel, ...]
) -> clients.Attribution | None:
    return clients.attribute(
        mount.server,
        by_address,
        port=mount.option_map.get("port"),
        mountpoint=mount.mountpoint,
        tunnels=tunnels,
    )


def _filesystems(
    mounts: tuple[Mount, ...], by_address: dict[str, str] | None, tunnels: tuple = ()
) -> dict[str, FileSystem]:
    """The known file systems the mounts name, by id (one query)."""
    ids = {a.filesystem_id for m in mounts if (a := _attribute(m, by_address, tunnels))}
    if not ids:
        return {}
    rows = FileSystem.objects.filter(filesystem_id__in=ids, deleted__isnull=True)
    return {fs.filesystem_id: fs for fs in rows.select_related("region")}


def _op_table(mount: Mount) -> dict[str, list[int]]:
    return {
        op.name: [op.ops, max(op.transmissions - op.ops, 0), op.timeouts, op.rtt_ms, op.execute_ms]
        for op in mount.ops
        if op.ops
    }


def _op_increase(previous: dict, current: dict[str, list[int]]) -> dict[str, list[int]]:
    out = {}
    for name, now in current.items():
        before = previous.get(name) or [0] * len(now)
        grown = [a - b for a, b in zip(now, before, strict=False)]
        if any(g < 0 for g in grown):  # restarted: counted since then
            grown = list(now)
        if grown[0] > 0:
            out[name] = grown
    return out


def add_to_hours(samples: list[NfsSample]) -> None:
    """Adds the increases of the file systems' mounts to their clients' running totals
    (``NfsTotal``) and hours (``NfsHour``), one upsert a row each (``INSERT … ON CONFLICT … DO
    UPDATE SET x = x + excluded.x``, PostgreSQL and SQLite). An hour row made now opens at the
    running totals before this increase (the totals just written less it); one added to keeps
    its opening."""
    rows: dict[tuple, list] = {}
    for s in samples:
        if s.filesystem_id is None:
            continue
        hour = s.time.replace(minute=0, second=0, microsecond=0)
        row = rows.setdefault((s.filesystem_id, s.client_id, hour), [0.0] + [0] * len(COUNTERS))
        row[0] += s.seconds
        for i, name in enumerate(COUNTERS, 1):
            row[i] += getattr(s, name)
    if not rows:
        return
    q = connection.ops.quote_name
    total = q(NfsTotal._meta.db_table)
    added = ", ".join(f"{q(c)} = {total}.{q(c)} + excluded.{q(c)}" for c in COUNTERS)
    to_totals = (
        f"INSERT INTO {total} ({q('filesystem_id')}, {q('client_id')}, "
        f"{', '.join(q(c) for c in COUNTERS)}) VALUES ({', '.join(['%s'] * (2 + len(COUNTERS)))}) "
        f"ON CONFLICT ({q('filesystem_id')}, {q('client_id')}) DO UPDATE SET {added}"
    )
    columns = ["seconds", *COUNTERS]
    table = q(NfsHour._meta.db_table)
    insert = ", ".join(
        q(c)
        for c in (
            "filesystem_id",
            "client_id",
            "hour",
            *columns,
            *(f"opening_{c}" for c in COUNTERS),
        )
    )
    opening = ", ".join(f"t.{q(c)} - %s" for c in COUNTERS)
    update = ", ".join(f"{q(c)} = {table}.{q(c)} + excluded.{q(c)}" for c in columns)
    to_hours = (
        f"INSERT INTO {table} ({insert}) SELECT {', '.join(['%s'] * (3 + len(columns)))}, "
        f"{opening} FROM {total} t WHERE t.{q('filesystem_id')} = %s AND t.{q('client_id')} = %s "
        f"ON CONFLICT ({q('filesystem_id')}, {q('hour')}, {q('client_id')}) DO UPDATE SET {update}"
    )
    adapt = connection.ops.adapt_datetimefield_value
    # in key order: two pushes touching the same totals lock them in the same order
    keys = sorted(rows)
    with connection.cursor() as cursor:
        cursor.executemany(
            to_totals, [(fs, client, *rows[fs, client, h][1:]) for fs, client, h in keys]
        )
        cursor.executemany(
            to_hours,
            [
                (fs, client, adapt(h), *rows[fs, client, h], *rows[fs, client, h][1:], fs, client)
                for fs, client, h in keys
            ],
        )


def rebuild_totals() -> None:
    """Every client's running totals and its hours' openings worked out again from the hours
    kept (for history written without pushes, as ``bench/nfs_clients.py`` writes it)."""
    q = connection.ops.quote_name
    total, table = q(NfsTotal._meta.db_table), q(NfsHour._meta.db_table)
    names = ", ".join(q(c) for c in COUNTERS)
    sums = ", ".join(f"SUM({q(c)})" for c in COUNTERS)
    before = ", ".join(f"COALESCE(SUM({q(c)}) OVER w, 0) AS {q(c)}" for c in COUNTERS)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {total}")
        cursor.execute(
            f"INSERT INTO {total} ({q('filesystem_id')}, {q('client_id')}, {names}) "
            f"SELECT {q('filesystem_id')}, {q('client_id')}, {sums} FROM {table} "
            f"GROUP BY {q('filesystem_id')}, {q('client_id')}"
        )
        cursor.execute(
            f"UPDATE {table} SET "
            + ", ".join(f"{q('opening_' + c)} = o.{q(c)}" for c in COUNTERS)
            + f" FROM (SELECT {q('id')}, {before} FROM {table} WINDOW w AS (PARTITION BY "
            f"{q('filesystem_id')}, {q('client_id')} ORDER BY {q('hour')} ROWS BETWEEN UNBOUNDED "
            f"PRECEDING AND 1 PRECEDING)) o WHERE {table}.{q('id')} = o.{q('id')}"
        )


def _saved_client(
    identity: str,
    hostname: str,
    instance_id: str,
    lookups: list[dict],
    locks: list[dict],
    now: datetime,
    key: ClientKey | None,
) -> NfsClient:
    """The pushing client, locked for the push's transaction, with what it says of itself now:
    names, lookups (and the slowest), locks (and how many did not come), the key it used."""
    client, _ = NfsClient.objects.select_for_update().get_or_create(
        identity=identity, defaults={"last_push": now}
    )
    client.hostname, client.instance_id = hostname, instance_id
    client.lookups, client.locks, client.last_push = lookups, locks, now
    took = [t for lookup in lookups for t in (lookup["reverse_seconds"], lookup["forward_seconds"])]
    client.slowest_lookup = max((t for t in took if t is not None), default=None)
    client.stuck_locks = sum(1 for lock in locks if not lock["ok"])
    if key is not None:
        client.key = key
    client.save()
    return client


def _saved_mount(
    row: NfsMount,
    mount: Mount,
    fs: FileSystem | None,
    attribution: clients.Attribution | None,
    now: datetime,
) -> NfsSample | None:
    """``row`` saved as ``mount`` reads now; what it counted since its previous push (None at
    its first, or when the counters cannot be compared), to be written with the others."""
    now_counters = clients.counters(mount)
    ops = _op_table(mount)
    sample = None
    if row.pk and now_counters is not None and row.counters:
        seconds = (now - row.last_push).total_seconds()
        grown = clients.increase(
            row.counters, row.age_seconds, now_counters, mount.age_seconds, seconds
        )
        if grown is not None:
            row.ops_increase = _op_increase(row.ops or {}, ops)
            sample = NfsSample(
                mount=row, client=row.client, filesystem=fs, time=now, seconds=seconds, **grown
            )
    row.filesystem = fs
    row.attributed_by = attribution.by if fs is not None and attribution else ""
    row.server, row.export = mount.server, mount.export
    row.mountpoint, row.version = mount.mountpoint, mount.version
    row.options = mount.option_map
    row.age_seconds, row.error = mount.age_seconds, mount.error
    if now_counters is not None:
        row.counters, row.ops = now_counters, ops
    row.last_push = now
    row.save()
    return sample


def store(
    hostname: str,
    instance_id: str,
    mounts: tuple[Mount, ...],
    lookups: list[dict],
    locks: list[dict],
    now: datetime,
    key: ClientKey | None = None,
    tunnels: tuple[clients.Tunnel, ...] = (),
) -> Stored:
    """Saves a client's push: the client, its mounts as of now, and each mount's increase since
    its previous push (none at its first); a mount of 127.0.0.1 is tied by efs-utils'
    ``tunnels`` (``read_tunnels``). A mount no longer listed is kept as it was (its
    increases stay in the history; its ``last_push`` says since when it is gone). Safe to run twice: a second push at the same moment
    finds no time between the two and adds no increase."""
    identity = instance_id or hostname
    by_address = mount_targets() if any(_ADDRESS.match(m.server) for m in mounts) else None
    known = _filesystems(mounts, by_address, tunnels)
    samples: list[NfsSample] = []
    attributed = 0
    with transaction.atomic():
        client = _saved_client(identity, hostname, instance_id, lookups, locks, now, key)
        existing = {(m.mountpoint, m.device): m for m in client.mounts.all()}
        seen = set()
        for mount in mounts:
            where = (mount.mountpoint, mount.device)
            if where in seen:
                continue  # the same mount listed twice (bind mounts): counted once
            seen.add(where)
            attribution = _attribute(mount, by_address, tunnels)
            fs = known.get(attribution.filesystem_id) if attribution else None
            attributed += fs is not None
            row = existing.get(where) or NfsMount(client=client, device=mount.device)
            sample = _saved_mount(row, mount, fs, attribution, now)
            if sample is not None:
                samples.append(sample)
        NfsSample.objects.bulk_create(samples)
        add_to_hours(samples)
    return Stored(client, len(seen), attributed, len(samples))

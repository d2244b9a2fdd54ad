"""Demo mode: NFS clients of the demo file systems, pushing as agents/vigil-nfs-push would every
minute while ``make run`` holds ``running_clients()`` open: ``app-1`` the top talker, ``app-2``
a quiet one, ``batch-7`` with a soft NFSv4.0 mount and a reverse lookup of its server that takes
5 s (the lock trap). Pushes go through ``client_push`` as the API's do.

Their counters add up to what the demo's CloudWatch stand-in serves for the same file system
(``demo_workloads.minute_values``): each client counts its fixed share of the file system's
bytes and operations since midnight UTC (its mount's age: a remount at midnight, which a push
reads as counters that started again), so any moment's push follows from the clock alone and
the page's clients' sums meet CloudWatch's, within a minute's rounding."""

from __future__ import annotations

import math
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from functools import lru_cache

from django.utils import timezone

from apps.lib import demo_runtime

from .client_push import read_push, store
from .demo_workloads import DAY_MIN, DEMO_FLEET, PROFILES, minute_values
from .models import FileSystem

GOOD = (
    "rw,vers=4.1,rsize=1048576,wsize=1048576,namlen=255,hard,noresvport,proto=tcp,timeo=600,"
    "retrans=2,sec=sys"
)
SOFT = "rw,vers=4.0,rsize=65536,wsize=65536,namlen=255,soft,proto=tcp,timeo=100,retrans=3,sec=sys"
#: name, instance id, options, its shares of the file system's bytes read, bytes written and
#: metadata operations (each column sums to 1), RTT ms per op, and the seconds its reverse
#: lookup takes.
CLIENTS = (
    ("app-1", "i-0a1b2c3d4e5f60001", GOOD, 0.85, 0.90, 0.80, 2, 0.004),
    ("app-2", "i-0a1b2c3d4e5f60002", GOOD, 0.03, 0.05, 0.12, 1, 0.003),
    ("batch-7", "i-0a1b2c3d4e5f60007", SOFT, 0.12, 0.05, 0.08, 9, 5.0),
)
INTERVAL_S = 60
#: The file system's counters the clients share: CloudWatch's per-minute sums by name.
SHARED = ("data_read_bytes", "data_read_count", "data_write_bytes", "data_write_count",
          "metadata_count")  # fmt: skip


def mountstats(server: str, options: str, age: int, counters: tuple) -> str:
    """A mountstats block of an NFSv4 mount ``age`` seconds old that counted ``counters``:
    (bytes read, bytes written, reads, writes, metadata operations, RTT ms per op)."""
    read_b, write_b, r, w, m, rtt = counters
    ops = [  # name, operations, bytes sent, bytes received
        ("READ", r, 120 * r, read_b + 100 * r),
        ("WRITE", w, write_b + 200 * w, 150 * w),
        ("GETATTR", m // 2, 200 * (m // 2), 240 * (m // 2)),
        ("LOOKUP", m // 4, 220 * (m // 4), 260 * (m // 4)),
        ("ACCESS", m - m // 2 - m // 4, 180 * (m - m // 2 - m // 4), 160 * (m - m // 2 - m // 4)),
    ]
    lines = [
        f"device {server}:/ mounted on /mnt/shared with fstype nfs4 statvers=1.1",
        f"\topts:\t{options}",
        f"\tage:\t{age}",
        f"\tbytes:\t{read_b} {write_b} 0 0 {read_b} {write_b} {read_b // 4096} {write_b // 4096}",
        "\tRPC iostats version: 1.1  p/v: 100003/4 (nfs)",
        f"\txprt:\ttcp 0 1 1 0 0 {r + w + m} {r + w + m} 0 {r + w + m} 0 64 0 0",
        "\tper-op statistics",
    ]
    for name, count, sent, received in ops:
        lines.append(
            f"\t{name:>12}: {count} {count} 0 {sent} {received} 0 {rtt * count} "
            f"{(rtt + 1) * count} 0"
        )
    return "\n".join(lines) + "\n"


def _subject(fs: FileSystem) -> tuple | None:
    """What the stand-in serves ``fs``'s minutes from (``demo_cloudwatch._lookup``, read from
    the database): its profile's key, seed, phase, Region and type; None off the demo fleet."""
    fleet = {name: (key, phase) for name, key, _, phase in DEMO_FLEET}
    if fs.name not in fleet or not fs.filesystem_id[3:11]:
        return None
    key, phase = fleet[fs.name]
    seed = int(fs.filesystem_id[3:11], 16) % 997
    return key, seed, phase, fs.region.code, fs.file_system_type or "regional"


@lru_cache(maxsize=16)
def _day_sums(subject: tuple, day: int) -> tuple[tuple[float, ...], ...]:
    """The file system's ``SHARED`` sums from the day's start to each minute's start (1,441),
    and each minute's own values last: a day's CloudWatch minutes, worked out once."""
    key, seed, phase, region, fs_type = subject
    running = [0.0] * len(SHARED)
    out = [tuple(running)]
    for minute in range(day * DAY_MIN, (day + 1) * DAY_MIN):
        values = minute_values(
            PROFILES[key], seed, minute, phase, region=region, file_system_type=fs_type
        )
        running = [r + values.get(n, 0.0) for r, n in zip(running, SHARED, strict=True)]
        out.append(tuple(running))
    return tuple(out)


def counted_since_midnight(fs: FileSystem, now: datetime) -> dict[str, float] | None:
    """The file system's ``SHARED`` sums from midnight UTC to ``now`` as CloudWatch's minutes
    count them (the minute ``now`` is in, in proportion); None off the demo fleet."""
    subject = _subject(fs)
    if subject is None:
        return None
    seconds = now.timestamp()
    minute = int(seconds // 60)
    day, of_day = divmod(minute, DAY_MIN)
    sums = _day_sums(subject, day)
    part = (seconds - minute * 60) / 60
    return {
        name: before + (after - before) * part
        for name, before, after in zip(SHARED, sums[of_day], sums[of_day + 1], strict=True)
    }


def push_all(now: datetime | None = None) -> int:
    """One push of every demo client for the demo file systems; how many were pushed."""
    now = now or timezone.now()
    midnight = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    age = int((now - midnight).total_seconds())
    filesystems = [
        (fs, counted)
        for fs in FileSystem.objects.filter(region__account__is_demo=True, deleted__isnull=True)
        .select_related("region")
        .order_by("pk")[:2]
        if (counted := counted_since_midnight(fs, now)) is not None
    ]
    pushed = 0
    for name, instance_id, options, reads, writes, meta, rtt, reverse_s in CLIENTS:
        text = "".join(
            mountstats(
                f"{fs.filesystem_id}.efs.{fs.region.code}.amazonaws.com",
                options,
                age,
                (
                    math.floor(c["data_read_bytes"] * reads),
                    math.floor(c["data_write_bytes"] * writes),
                    math.floor(c["data_read_count"] * reads),
                    math.floor(c["data_write_count"] * writes),
                    math.floor(c["metadata_count"] * meta),
                    rtt,
                ),
            ).replace("/mnt/shared", f"/mnt/{fs.name or fs.filesystem_id}")
            for fs, c in filesystems
        )
        if not text:
            continue
        lookups = [
            {
                "server": f"{fs.filesystem_id}.efs.{fs.region.code}.amazonaws.com",
                "address": f"10.0.{i}.{10 + i}",
                "reverse_seconds": reverse_s,
                "reverse_name": "",
                "forward_seconds": 0.002,
                "forward_ok": True,
            }
            for i, (fs, _) in enumerate(filesystems)
        ]
        hostname, iid, mounts, lookups, locks = read_push(
            {"hostname": name, "instance_id": instance_id, "mountstats": text, "lookups": lookups}
        )
        store(hostname, iid, mounts, lookups, locks, now)
        pushed += 1
    return pushed


def running_clients() -> AbstractContextManager[None]:
    """Pushes every minute in a thread while held open (``make run`` in demo mode)."""
    return demo_runtime.repeating("demo-nfs-clients", INTERVAL_S, push_all)

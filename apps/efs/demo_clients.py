"""Demo mode: NFS clients of the demo file systems, pushing as agents/vigil-nfs-push would every
minute while ``make run`` holds ``running_clients()`` open: ``app-1`` the top talker, ``app-2``
a quiet one, ``batch-7`` with a soft NFSv4.0 mount and a reverse lookup of its server that takes
5 s (the lock trap). Counters grow from a fixed epoch at each client's rates, so any moment's
push follows from the clock alone; pushes go through ``client_push`` as the API's do."""

from __future__ import annotations

from contextlib import AbstractContextManager
from datetime import UTC, datetime

from django.utils import timezone

from apps.demo import runtime

from .client_push import read_push, store
from .models import FileSystem

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
GOOD = (
    "rw,vers=4.1,rsize=1048576,wsize=1048576,namlen=255,hard,noresvport,proto=tcp,timeo=600,"
    "retrans=2,sec=sys"
)
SOFT = "rw,vers=4.0,rsize=65536,wsize=65536,namlen=255,soft,proto=tcp,timeo=100,retrans=3,sec=sys"
#: name, instance id, options, per second: bytes read, written, reads, writes, metadata ops,
#: RTT ms per op, and the seconds its reverse lookup takes.
CLIENTS = (
    ("app-1", "i-0a1b2c3d4e5f60001", GOOD, 6_000_000, 900_000, 45, 12, 300, 2, 0.004),
    ("app-2", "i-0a1b2c3d4e5f60002", GOOD, 200_000, 50_000, 4, 2, 40, 1, 0.003),
    ("batch-7", "i-0a1b2c3d4e5f60007", SOFT, 900_000, 10_000, 20, 1, 15, 9, 5.0),
)
INTERVAL_S = 60


def mountstats(server: str, options: str, seconds: int, rates: tuple) -> str:
    """A mountstats block of an NFSv4 mount ``seconds`` old at ``rates`` (kernel layout)."""
    read_b, write_b, reads, writes, meta, rtt = rates
    r, w, m = reads * seconds, writes * seconds, meta * seconds
    ops = [  # name, operations, bytes sent, bytes received
        ("READ", r, 120 * r, read_b * seconds + 100 * r),
        ("WRITE", w, write_b * seconds + 200 * w, 150 * w),
        ("GETATTR", m // 2, 200 * (m // 2), 240 * (m // 2)),
        ("LOOKUP", m // 4, 220 * (m // 4), 260 * (m // 4)),
        ("ACCESS", m - m // 2 - m // 4, 180 * (m - m // 2 - m // 4), 160 * (m - m // 2 - m // 4)),
    ]
    lines = [
        f"device {server}:/ mounted on /mnt/shared with fstype nfs4 statvers=1.1",
        f"\topts:\t{options}",
        f"\tage:\t{seconds}",
        f"\tbytes:\t{read_b * seconds} {write_b * seconds} 0 0 {read_b * seconds} "
        f"{write_b * seconds} {read_b * seconds // 4096} {write_b * seconds // 4096}",
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


def push_all(now: datetime | None = None) -> int:
    """One push of every demo client for the demo file systems; how many were pushed."""
    now = now or timezone.now()
    seconds = int((now - EPOCH).total_seconds())
    filesystems = list(
        FileSystem.objects.filter(region__account__is_demo=True, deleted__isnull=True)
        .select_related("region")
        .order_by("pk")[:2]
    )
    pushed = 0
    for name, instance_id, options, *rates, reverse_s in CLIENTS:
        text = "".join(
            mountstats(
                f"{fs.filesystem_id}.efs.{fs.region.code}.amazonaws.com",
                options,
                seconds,
                tuple(rates),
            ).replace("/mnt/shared", f"/mnt/{fs.name or fs.filesystem_id}")
            for fs in filesystems
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
            for i, fs in enumerate(filesystems)
        ]
        hostname, iid, mounts, lookups, locks = read_push(
            {"hostname": name, "instance_id": instance_id, "mountstats": text, "lookups": lookups}
        )
        store(hostname, iid, mounts, lookups, locks, now)
        pushed += 1
    return pushed


def running_clients() -> AbstractContextManager[None]:
    """Pushes every minute in a thread while held open (``make run`` in demo mode)."""
    return runtime.repeating("demo-nfs-clients", INTERVAL_S, push_all)

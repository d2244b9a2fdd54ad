"""Demo mode: the seed's storage client, and the seed layout as real /proc/mdstat text.

The layout (``seed_layout_mdstat``, ``SEED_*``) is pure, for the demo, the tests and the
benchmarks: three storage servers each export five iSCSI disks (``sdb``..``sdf`` on
``storage-a``, ``sdg``..``sdk`` on ``storage-b``, ``sdl``..``sdp`` on ``storage-c``); ``md1``..
``md5`` are each ``mdadm --level=10 --layout=o3`` over the i-th disk of every server, and
``md99`` a RAID-0 over them. ``set_up()`` adds the demo host that "pushes" it through the same
ingest path as a real report (with SMART, by-id links and sysfs words: ``seed_smart``,
``seed_devlinks``), and ``refresh(now)`` re-sends it with the rebuild further along; these two
import Django's models when called, so the layout stays importable alone.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from contextlib import AbstractContextManager
from datetime import datetime

from django.utils import timezone

from apps.lib import demo_runtime
from apps.regions.demo import demo_region

from .collect import ingest
from .models import Host

__all__ = [
    "DEMO_HOST",
    "SEED_ARRAYS",
    "SEED_DOMAINS",
    "SEED_RULES",
    "SEED_SERVERS",
    "rebuild_percent",
    "refresh",
    "refresh_all",
    "running_reports",
    "seed_devlinks",
    "seed_layout_mdstat",
    "seed_smart",
    "seed_sysfs",
    "set_up",
]

SEED_SERVERS = ("storage-a", "storage-b", "storage-c")
_DISKS = "bcdefghijklmnop"
# md1..md5 -> its three disks, in slot order (one per server)
SEED_ARRAYS: dict[str, tuple[str, ...]] = {
    f"md{i + 1}": tuple(f"sd{_DISKS[server * 5 + i]}" for server in range(3)) for i in range(5)
}
SEED_DOMAINS: dict[str, str] = {f"sd{disk}": SEED_SERVERS[n // 5] for n, disk in enumerate(_DISKS)}
# The same mapping as a host's failure-domain rules (device patterns, see domains.py).
SEED_RULES: dict[str, str] = {
    f"sd[{_DISKS[i * 5]}-{_DISKS[i * 5 + 4]}]": server for i, server in enumerate(SEED_SERVERS)
}

REPORT_INTERVAL_S = 60  # as often as the beat tick that queued the demo's report before
REBUILDING_DISK = "sdh"  # storage-b's disk in md2, re-added and recovering
_DISK_KIB = 1073610752  # a 1 TiB iSCSI LUN less the md superblock and bitmap space
_SPEED_KIB = 148213


def recovery_line(blocks: int, percent: float, speed_kib: int) -> str:
    """The progress line of an array being recovered, in the kernel's status_resync() format."""
    per_mille = round(percent * 10)
    done = blocks * per_mille // 1000
    finish = (blocks - done) / speed_kib / 60
    bar = "=" * (per_mille // 50) + ">" + "." * (20 - per_mille // 50)
    return (
        f"      [{bar}]  recovery ={per_mille // 10:3d}.{per_mille % 10}% "
        f"({done}/{blocks}) finish={finish:.1f}min speed={speed_kib}K/sec"
    )


def seed_layout_mdstat(
    failed: Collection[str] = (),
    rebuilding: str | None = None,
    percent: float = 37.4,
) -> str:
    """/proc/mdstat of the seed client, as a 6.x kernel prints it.

    ``failed`` names disks marked ``(F)``; ``rebuilding`` names one disk that was re-added and is
    being recovered (its slot shows ``_`` and the array shows a ``recovery`` line at
    ``percent``). A failed or rebuilding disk leaves its slot down.
    """
    lines = ["Personalities : [raid10] [raid0] "]
    members = " ".join(f"md{i}[{i - 1}]" for i in range(5, 0, -1))
    lines += [
        f"md99 : active raid0 {members}",
        f"      {_DISK_KIB * 5} blocks super 1.2 512k chunks",
        "      ",
    ]
    for name in sorted(SEED_ARRAYS, key=lambda n: int(n[2:]), reverse=True):
        disks = SEED_ARRAYS[name]
        tokens = []
        for slot in reversed(range(len(disks))):
            flag = "(F)" if disks[slot] in failed else ""
            tokens.append(f"{disks[slot]}[{slot}]{flag}")
        up = "".join("_" if d in failed or d == rebuilding else "U" for d in disks)
        lines.append(f"{name} : active raid10 {' '.join(tokens)}")
        lines.append(
            f"      {_DISK_KIB} blocks super 1.2 512K chunks 3 offset-copies "
            f"[{len(disks)}/{up.count('U')}] [{up}]"
        )
        if rebuilding in disks:
            lines.append(recovery_line(_DISK_KIB, percent, _SPEED_KIB))
        lines.append("      bitmap: 1/8 pages [4KB], 65536KB chunk")
        lines.append("")
    lines.append("unused devices: <none>")
    return "\n".join(lines) + "\n"


FAILING = "sdd"  # storage-a's disk in md3: SMART counts 24 pending sectors, md has not failed it
_PORTALS = {server: f"192.0.2.{11 + n}:3260" for n, server in enumerate(SEED_SERVERS)}


def _disk_number(disk: str) -> int:
    return _DISKS.index(disk[2:])


def seed_smart(disk: str, failing: str = FAILING) -> str:
    """What ``smartctl --json=c -a /dev/<disk>`` prints for a seed disk: a 1 TB SATA disk
    passed through iSCSI (SAT), in the shape of smartmontools 7.4's JSON."""
    n = _disk_number(disk)
    pending = 24 if disk == failing else 0
    attributes = [
        (5, "Reallocated_Sector_Ct", 0),
        (9, "Power_On_Hours", 21_300 + 37 * n),
        (194, "Temperature_Celsius", 33 + n % 4),
        (197, "Current_Pending_Sector", pending),
        (198, "Offline_Uncorrectable", 0),
    ]
    report = {
        "json_format_version": [1, 0],
        "smartctl": {
            "version": [7, 4],
            "argv": ["smartctl", "--json=c", "-a", f"/dev/{disk}"],
            "exit_status": 0 if not pending else 64,
        },
        "device": {"name": f"/dev/{disk}", "info_name": f"/dev/{disk} [SAT]", "type": "sat"}
        | {"protocol": "ATA"},
        "model_name": "ST1000NM0055-1V410C",
        "serial_number": f"ZBS0{4100 + n * 7:04d}",
        "wwn": {"naa": 5, "oui": 3152, "id": 2_850_000_000 + n * 4099},
        "firmware_version": "TN05",
        "user_capacity": {"blocks": 1953525168, "bytes": 1_000_204_886_016},
        "smart_support": {"available": True, "enabled": True},
        "smart_status": {"passed": True},
        "ata_smart_attributes": {
            "revision": 10,
            "table": [
                {"id": ident, "name": name, "value": 100, "worst": 100, "thresh": 0}
                | {"when_failed": "", "raw": {"value": raw, "string": str(raw)}}
                for ident, name, raw in attributes
            ],
        },
        "power_on_time": {"hours": 21_300 + 37 * n},
        "temperature": {"current": 33 + n % 4},
    }
    return json.dumps(report, separators=(",", ":"))


def seed_devlinks() -> str:
    """The seed client's /dev/disk/by-id and by-path links, as the agent sends them."""
    lines = []
    for n, letter in enumerate(_DISKS):
        disk = f"sd{letter}"
        wwn = f"0x5{3152:06x}{2_850_000_000 + n * 4099:09x}"
        server = SEED_SERVERS[n // 5]
        lines.append(f"/dev/disk/by-id/wwn-{wwn} -> ../../{disk}")
        lines.append(
            f"/dev/disk/by-id/scsi-SATA_ST1000NM0055-1V4_ZBS0{4100 + n * 7:04d} -> ../../{disk}"
        )
        target = f"iqn.2026-01.example.{server}:disks"
        lines.append(
            f"/dev/disk/by-path/ip-{_PORTALS[server]}-iscsi-{target}-lun-{n % 5} -> ../../{disk}"
        )
    return "\n".join(lines) + "\n"


def seed_sysfs(rebuilding: str | None = REBUILDING_DISK) -> str:
    """The arrays' sysfs files: md1..md5 idle after a clean monthly check, the one holding
    ``rebuilding`` recovering; md99, a RAID-0, has no sync_action."""
    lines = ["/sys/block/md99/md/array_state:clean"]
    for name, disks in SEED_ARRAYS.items():
        action = "recover" if rebuilding in disks else "idle"
        lines += [
            f"/sys/block/{name}/md/array_state:{'active' if action == 'recover' else 'clean'}",
            f"/sys/block/{name}/md/sync_action:{action}",
            f"/sys/block/{name}/md/last_sync_action:check",
            f"/sys/block/{name}/md/mismatch_cnt:0",
        ]
    return "\n".join(lines) + "\n"


DEMO_HOST = "demo-storage-client"
REBUILDING = REBUILDING_DISK
START_PERCENT = 37.4
PERCENT_PER_MINUTE = 0.8  # 148 MiB/s over a 1 TiB disk


def rebuild_percent(host: Host, now: datetime) -> float:
    """Where the demo rebuild is: it advances with time and starts over before it completes."""
    minutes = max((now - host.created).total_seconds() / 60, 0)
    span = 99.0 - START_PERCENT
    return round(START_PERCENT + (minutes * PERCENT_PER_MINUTE) % span, 1)


def set_up() -> Host:
    """Add (idempotent), in the demo AWS region, a host that pushes the seed layout with one
    rebuild in progress, each disk's ``smartctl --json -a`` (the storage servers pass their SATA
    disks through, so SMART reaches the client; ``FAILING`` has 24 pending sectors), the
    disks' by-id and by-path names (iSCSI targets and LUNs) and the arrays' sysfs files (a
    check ended with no mismatch)."""
    region = demo_region()
    # Found by its flag, so that a user may rename it; by its name before the flag is set.
    host = Host.objects.filter(is_demo=True).order_by("pk").first()
    created = False
    if host is None:
        host, created = Host.objects.get_or_create(
            name=DEMO_HOST,
            defaults={
                "region": region,
                "collection": Host.Collection.PUSH,
                "domain_rules": SEED_RULES,
                "domain_noun": "storage server",
            },
        )
    if created:
        Host.objects.filter(pk=host.pk).update(is_demo=True)
        host.is_demo = True
    elif host.is_demo and host.region_id != region.pk:  # moved from an earlier demo's site
        Host.objects.filter(pk=host.pk).update(region=region)
        host.arrays.update(region=region)
        host.region = region
    refresh(host)
    return host


def refresh_all() -> int:
    """Every enabled demo host "pushes" again, its rebuild further along: how many."""
    hosts = list(Host.objects.filter(is_demo=True, enabled=True))
    for host in hosts:
        refresh(host)
    return len(hosts)


def running_reports() -> AbstractContextManager[None]:
    """The demo hosts report every minute, as a pushing host would, while held open (``make
    run`` in demo mode: the concern's ``demo_runtime``)."""
    return demo_runtime.repeating("demo-raid-reports", REPORT_INTERVAL_S, refresh_all)


def refresh(host: Host, now: datetime | None = None) -> None:
    """Re-send the seed layout from the dispatcher, the rebuild further along, so the demo
    host never goes stale."""
    now = now or timezone.now()
    text = seed_layout_mdstat(rebuilding=REBUILDING, percent=rebuild_percent(host, now))
    disks = [f"sd{letter}" for letter in _DISKS]
    ingest(
        host,
        text,
        sysfs=seed_sysfs(),
        now=now,
        smart={disk: seed_smart(disk) for disk in disks},
        devlinks=seed_devlinks(),
    )

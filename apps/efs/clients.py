"""EFS from its clients' side: which file system a client's NFS mount is, what it did between two
pushes (counters turned into increases), and which of its mount options hurt on EFS.

Pure: no Django, no I/O. A counter only grows while the mount lives; a remount (its ``age``
went back) or a counter below its previous value means it started again from 0 in between,
and what it counts now happened since then, as for Galera's counters (``galera/rates.py``).

AWS's recommended mount options and their reasons are quoted from [HELPER] "Mount settings used
by EFS mount helper", https://docs.aws.amazon.com/efs/latest/ug/mount-helper-setting.html, and
[NFS] "Using the Network File System to mount EFS file systems",
https://docs.aws.amazon.com/efs/latest/ug/mounting-fs-old.html ("Although NFSv4.0 is supported,
we recommend that you use NFSv4.1"), both read 2026-11-26.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from apps.lib.status import Status, Verdict, worst

from .documented import KIB, METERING, READ_ON
from .parse_mountstats import UPKEEP, Mount

__all__ = [
    "COUNTERS",
    "RECOMMENDED",
    "Attribution",
    "OptionFinding",
    "Tunnel",
    "attribute",
    "lock_trap",
    "with_client_notes",
    "counters",
    "increase",
    "metered_range",
    "option_findings",
    "per_operation",
]

HELPER = "https://docs.aws.amazon.com/efs/latest/ug/mount-helper-setting.html"
NFS_PAGE = "https://docs.aws.amazon.com/efs/latest/ug/mounting-fs-old.html"

#: The cumulative counters kept of a mount at each push, in the order of the history columns.
COUNTERS = (
    "read_bytes",
    "write_bytes",
    "read_ops",
    "write_ops",
    "metadata_ops",
    "read_rtt_ms",
    "read_execute_ms",
    "write_rtt_ms",
    "write_execute_ms",
    "metadata_rtt_ms",
    "metadata_execute_ms",
    "retrans",
    "timeouts",
)

# fs-0123abcd.efs.eu-west-1.amazonaws.com, with an Availability Zone before it for a One Zone
# file system's or an AZ-specific name (eu-west-1a.fs-….efs.…), .amazonaws.com.cn in China.
_EFS_NAME = re.compile(
    r"^(?:[a-z0-9-]+\.)?(fs-[0-9a-f]{8,40})\.efs\.([a-z]{2}(?:-[a-z]+)+-\d)\.amazonaws\.com(?:\.cn)?\.?$"
)


@dataclass(frozen=True)
class Attribution:
    filesystem_id: str
    region: str  # "" when known from a mount target's address or a tunnel only
    by: str  # "name", "mount target address" or "efs-utils tunnel"


@dataclass(frozen=True)
class Tunnel:
    """An efs-utils mount's local tunnel, as its state file names it: ``mount -t efs`` (with
    ``tls``, and every mount of efs-utils 2's efs-proxy) mounts 127.0.0.1 on a port of its own
    (20049-21049 by default) and forwards it to the file system, leaving
    ``/var/run/efs/<fs id>.<mount point, / as .>.<port>`` with the mount point in its JSON
    (aws/efs-utils ``src/efs_utils_common/proxy.py``, ``get_mount_specific_filename``,
    ``write_tunnel_state_file``; ``mount_utils.mount_nfs``; read 2026-11-26)."""

    filesystem_id: str
    port: int
    mountpoint: str = ""


LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
NFS_PORT = 2049  # a mount without port= is on it (efs-utils' watchdog reads it so too)


def attribute(
    server: str,
    mount_targets: Mapping[str, str] | None = None,
    *,
    port: str | None = None,
    mountpoint: str = "",
    tunnels: Iterable[Tunnel] = (),
) -> Attribution | None:
    """The EFS file system a mount's server is: by its DNS name, by the address of one of its
    mount targets (``mount_targets``: address -> file system id), or, for a mount of 127.0.0.1,
    by efs-utils' tunnel on its port (``port``: its ``port=`` option) whose state file names the
    same mount point (or none); None for another server."""
    match = _EFS_NAME.match(server.lower())
    if match:
        return Attribution(match.group(1), match.group(2), "name")
    if server.lower() in LOOPBACK:
        number = int(port) if port and port.isdigit() else NFS_PORT
        for tunnel in tunnels:
            same = not tunnel.mountpoint or (
                tunnel.mountpoint.rstrip("/") == mountpoint.rstrip("/")
            )
            if tunnel.port == number and same:
                return Attribution(tunnel.filesystem_id, "", "efs-utils tunnel")
        return None
    fs = (mount_targets or {}).get(server)
    return Attribution(fs, "", "mount target address") if fs else None


def counters(mount: Mount) -> dict[str, int] | None:
    """The mount's cumulative counters by name (``COUNTERS``), None when it has none."""
    if mount.byte_counters is None or not mount.ops:
        return None
    kinds = mount.kinds()
    out = {"read_bytes": mount.read_bytes or 0, "write_bytes": mount.write_bytes or 0}
    for kind in ("read", "write", "metadata"):
        out[f"{kind}_ops"] = kinds[kind]["ops"]
        out[f"{kind}_rtt_ms"] = kinds[kind]["rtt_ms"]
        out[f"{kind}_execute_ms"] = kinds[kind]["execute_ms"]
    out["retrans"] = sum(k["retrans"] for k in kinds.values())
    out["timeouts"] = sum(k["timeouts"] for k in kinds.values())
    return {name: out[name] for name in COUNTERS}


def increase(
    previous: Mapping[str, int] | None,
    previous_age: int | None,
    current: Mapping[str, int],
    current_age: int | None,
    seconds: float,
) -> dict[str, int] | None:
    """What the mount counted between two pushes ``seconds`` apart; None when it cannot be told
    (no earlier push, no time between them). A remount or a counter that went back means the
    counters restarted from 0: the increase is then the current values (those since then)."""
    if previous is None or seconds <= 0:
        return None
    remounted = previous_age is not None and current_age is not None and current_age < previous_age
    if remounted or any(current.get(k, 0) < previous.get(k, 0) for k in COUNTERS):
        return {k: int(current.get(k, 0)) for k in COUNTERS}
    return {k: int(current.get(k, 0)) - int(previous.get(k, 0)) for k in COUNTERS}


def metered_range(
    data_ops: float, data_bytes: float, metadata_ops: float, metering: Mapping | None = None
) -> tuple[float, float]:
    """The bytes EFS meters for a client's operations, as a range: a client counts operations
    and bytes, not each operation's size, and EFS meters each data operation at least 32 KiB and
    each metadata one at least 4 KiB (``documented.METERING``). The least is when every
    operation's size sits at or above the minimum (or the bytes, whichever is more), the most
    when every one but the largest is under it. Metadata operations' sizes are not counted by
    clients: they are taken at the minimum (what most are)."""
    table = metering or METERING
    data_min = table["data_minimum_bytes"].value
    meta_min = table["metadata_minimum_bytes"].value
    metadata = metadata_ops * meta_min
    low = max(data_ops * data_min, data_bytes)
    high = (data_ops - 1) * data_min + max(data_min, data_bytes) if data_ops >= 1 else data_bytes
    return low + metadata, high + metadata


@dataclass(frozen=True)
class Recommended:
    option: str
    want: str  # the value; "" for a flag
    reason: str
    source: str = HELPER
    read_on: str = READ_ON


RECOMMENDED = (
    Recommended(
        "vers",
        "4.1",
        "AWS recommends NFSv4.1 on EC2 Linux instances (NFSv4.0 is supported, 4.1 recommended)",
        NFS_PAGE,
    ),
    Recommended(
        "rsize",
        str(1024 * KIB),
        "the largest READ size the client can receive, to avoid diminished performance",
    ),
    Recommended(
        "wsize",
        str(1024 * KIB),
        "the largest WRITE size the client can send, to avoid diminished performance",
    ),
    Recommended(
        "hard",
        "",
        "requests are retried until the server replies, to ensure data integrity "
        "(a soft mount can return errors that corrupt data)",
    ),
    Recommended(
        "timeo",
        "600",
        "wait 60 seconds for a reply before retrying, to avoid diminished performance",
    ),
    Recommended(
        "retrans", "2", "retry twice before further recovery action, as the mount helper does"
    ),
    Recommended(
        "noresvport",
        "",
        "a new non-privileged TCP source port on reconnection keeps the file system available "
        "after a reconnection or network recovery event",
    ),
)


@dataclass(frozen=True)
class OptionFinding:
    option: str
    have: str  # what the mount has ("absent" when it is not set)
    want: str
    reason: str
    source: str
    read_on: str


def _shown(option: str, want: str) -> str:
    return f"{option}={want}" if want else option


def option_findings(options: Mapping[str, str], version: str = "") -> list[OptionFinding]:
    """The mount's options that differ from AWS's recommended ones, each with AWS's reason."""
    out = []
    for rec in RECOMMENDED:
        if rec.option == "vers":
            have = options.get("vers") or options.get("nfsvers") or version
            ok = have == rec.want
            shown = f"vers={have}" if have else "absent"
        elif rec.option == "hard":
            ok = "soft" not in options and "softerr" not in options
            shown = "soft" if not ok else "hard"
        elif not rec.want:
            ok = rec.option in options
            shown = rec.option if ok else "absent"
        else:
            have = options.get(rec.option, "")
            ok = have == rec.want
            shown = f"{rec.option}={have}" if have else "absent"
        if not ok:
            out.append(
                OptionFinding(
                    rec.option,
                    shown,
                    _shown(rec.option, rec.want),
                    rec.reason,
                    rec.source,
                    rec.read_on,
                )
            )
    return out


def per_operation(tables: Iterable[Mapping[str, list[int]]], limit: int = 8) -> list[dict]:
    """A client's operations by name (READ, WRITE, GETATTR, LOOKUP, ...) over its mounts' op
    tables (name -> [operations, retransmissions, timeouts, RTT ms, execute ms], cumulative
    since each was mounted): each one's count and average round-trip and execution time, READ
    and WRITE first, then the most frequent, ``limit`` in all; session upkeep (SEQUENCE, RENEW,
    ...) left out. Only the ``limit`` kept are worked out (a mount lists some 60 operations)."""
    tables = [t for t in tables if t]
    if len(tables) == 1:
        summed: Mapping[str, list[int]] = tables[0]
    else:
        summed = {}
        for table in tables:
            for name, values in table.items():
                row = summed.setdefault(name, [0] * 5)
                for i, value in enumerate(values[:5]):
                    row[i] += int(value)
    data = ("READ", "WRITE")  # what moves the bytes, always shown when used
    kept = heapq.nsmallest(
        limit,
        (
            (name not in data, -values[0], name)
            for name, values in summed.items()
            if values[0] > 0 and name not in UPKEEP
        ),
    )
    out = []
    for _, _, name in kept:
        ops, retrans, timeouts, rtt, execute = summed[name][:5]
        out.append(
            {
                "op": name,
                "ops": ops,
                "rtt_ms": rtt / ops,
                "execute_ms": execute / ops,
                "retrans": retrans,
                "timeouts": timeouts,
            }
        )
    return out


def shares(rows: Iterable[tuple[str, float]]) -> list[tuple[str, float, float]]:
    """(name, value) -> (name, value, share of the total), the largest first."""
    rows = list(rows)
    total = sum(v for _, v in rows)
    return sorted(
        ((n, v, (v / total if total else 0.0)) for n, v in rows), key=lambda r: (-r[1], r[0])
    )


def lock_trap(
    seen: Iterable[tuple[str, list[dict], list[dict]]], warn_seconds: float, names: int = 3
) -> list[str]:
    """What a file system's reporting clients (name, lookups, locks) say of the lock trap: each
    NFS server whose reverse or forward lookup took more than ``warn_seconds``, and each lock
    that did not come, in sentences for a reason."""
    slow: dict[tuple[str, str], list] = {}
    stuck: list[str] = []
    for name, lookups, locks in seen:
        for lookup in lookups or []:
            for way in ("reverse", "forward"):
                took = lookup.get(f"{way}_seconds") or 0
                if took > warn_seconds:
                    key = (way, lookup.get("address") if way == "reverse" else lookup.get("server"))
                    entry = slow.setdefault(key, [0.0, []])
                    entry[0] = max(entry[0], took)
                    if name not in entry[1]:
                        entry[1].append(name)
        stuck += [f"{name} {lock.get('mountpoint')}" for lock in locks or [] if not lock.get("ok")]
    out = []
    for (way, what), (took, who) in sorted(slow.items(), key=lambda kv: -kv[1][0]):
        shown = ", ".join(who[:names]) + (
            f" and {len(who) - names} more" if len(who) > names else ""
        )
        out.append(
            f"{way} lookup of {what} takes {took:.1f} s on {shown} (statd and lockd resolve their "
            "peers: locking hangs while reads and writes work)"
        )
    if stuck:
        more = f" and {len(stuck) - names} more" if len(stuck) > names else ""
        out.append(f"a shared lock did not come on {', '.join(stuck[:names])}{more}")
    return out


def with_client_notes(verdict: Verdict, notes: list[str]) -> Verdict:
    """The file system's verdict with its clients' lock-trap notes: at least a warning (missing
    CloudWatch data stays unknown), the notes after its reason."""
    if not notes:
        return verdict
    status = verdict.status
    if status is not Status.UNKNOWN:
        status = worst([status, Status.WARNING]) or Status.WARNING
    reason = "; ".join([verdict.reason, *("NFS clients: " + n for n in notes)])
    return Verdict(status, reason, verdict.figures)

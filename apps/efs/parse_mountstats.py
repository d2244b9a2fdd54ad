"""``/proc/self/mountstats`` of an NFS client, read into each NFS mount's counters.

Pure: no Django, no I/O. The kernel writes one ``device … mounted on … with fstype …`` line per
mount and, for NFS (``nfs``, ``nfs4``), indented lines after it: ``opts:``, ``age:``,
``bytes:`` (eight counters), ``xprt:`` (the transport), and the ``per-op statistics`` (per
operation: operations, transmissions, major timeouts, bytes sent, bytes received, and the
cumulative queue, round-trip and execution milliseconds; since Linux 5.x a ninth, errors).
Format: fs/nfs/super.c ``nfs_show_stats`` and net/sunrpc/stats.c ``rpc_clnt_show_stats``
(https://github.com/torvalds/linux/blob/master/net/sunrpc/stats.c, read 2026-11-26).

Bounded like every outside text (docs/architecture.md, "Trust"): the whole text, its lines,
the NFS mounts and operations of one text and every number; a text beyond a bound, or with no
``device`` line, is refused whole (``ParseError``); one NFS mount whose counters cannot be read
is kept with its ``error`` (its counters left out), and the others are read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "MAX_BYTES",
    "MAX_LINES",
    "MAX_LINE",
    "MAX_MOUNTS",
    "MAX_OPS",
    "METADATA",
    "Mount",
    "Op",
    "ParseError",
    "Xprt",
    "digest",
    "parse",
]

MAX_BYTES = 2 * 1024 * 1024  # a client with 100 NFS mounts of NFSv4.2 writes ~600 KiB
MAX_LINES = 50_000
MAX_LINE = 4096  # characters of one line (opts of real mounts are ~300)
MAX_MOUNTS = 256  # NFS mounts in one text
MAX_OPS = 128  # operations of one mount (NFSv4.2 lists about 70)
MAX_NAME = 1024  # characters of a device or mount point kept
MAX_U64 = 2**64 - 1  # the kernel's counters are u64 (an execute time may wrap: kept)
MAX_DIGITS = 20

NFS_TYPES = ("nfs", "nfs4")
READS = ("READ",)
WRITES = ("WRITE", "COMMIT")
#: Operations that move no file data: not counted (NULL pings, NFSv4 session upkeep).
UPKEEP = frozenset(
    {
        "NULL",
        "RENEW",
        "SETCLIENTID",
        "SETCLIENTID_CONFIRM",
        "EXCHANGE_ID",
        "CREATE_SESSION",
        "DESTROY_SESSION",
        "SEQUENCE",
        "GET_LEASE_TIME",
        "RECLAIM_COMPLETE",
        "DESTROY_CLIENTID",
        "BIND_CONN_TO_SESSION",
        "SERVER_CAPS",
        "FSINFO",
        "PATHCONF",
        "LOOKUP_ROOT",
    }
)
#: The kinds an operation is counted in: data reads, data writes, and metadata (all others
#: but upkeep), as EFS's CloudWatch metrics split them.
METADATA = "metadata"


class ParseError(ValueError):
    """The text is not mountstats, or is beyond a bound; names the line when it can."""


@dataclass(frozen=True)
class Op:
    """One operation's cumulative counters (milliseconds for the three times)."""

    name: str
    ops: int
    transmissions: int
    timeouts: int
    bytes_sent: int
    bytes_received: int
    queue_ms: int
    rtt_ms: int
    execute_ms: int
    errors: int | None = None

    @property
    def kind(self) -> str | None:
        if self.name in READS:
            return "read"
        if self.name in WRITES:
            return "write"
        return None if self.name in UPKEEP else METADATA


@dataclass(frozen=True)
class Xprt:
    """The RPC transport's counters that tell a network problem (``xprt:`` line)."""

    protocol: str
    connects: int
    sends: int
    receives: int
    bad_xids: int


@dataclass(frozen=True)
class Mount:
    """One NFS mount: where, how (options), and its counters since it was mounted."""

    device: str
    server: str
    export: str
    mountpoint: str
    fstype: str
    options: tuple[tuple[str, str], ...] = ()
    version: str = ""
    age_seconds: int | None = None
    #: The ``bytes:`` line: normal read/write, direct read/write, server read/write, pages
    #: read/written (nfs_iostat.h); None when it was not there.
    byte_counters: tuple[int, ...] | None = None
    xprt: Xprt | None = None
    ops: tuple[Op, ...] = ()
    error: str = ""

    @property
    def option_map(self) -> dict[str, str]:
        return dict(self.options)

    @property
    def read_bytes(self) -> int | None:
        """File data read from the server (serverreadbytes)."""
        return self.byte_counters[4] if self.byte_counters else None

    @property
    def write_bytes(self) -> int | None:
        """File data written to the server (serverwritebytes)."""
        return self.byte_counters[5] if self.byte_counters else None

    def kinds(self) -> dict[str, dict[str, int]]:
        """Per kind (read, write, metadata): ops, retransmissions, timeouts, RTT and execute
        milliseconds, bytes on the wire (sent + received)."""
        out = {k: dict.fromkeys(_KIND_FIELDS, 0) for k in ("read", "write", METADATA)}
        for op in self.ops:
            kind = op.kind
            if kind is None:
                continue
            row = out[kind]
            row["ops"] += op.ops
            row["retrans"] += max(op.transmissions - op.ops, 0)
            row["timeouts"] += op.timeouts
            row["rtt_ms"] += op.rtt_ms
            row["execute_ms"] += op.execute_ms
            row["wire_bytes"] += op.bytes_sent + op.bytes_received
        return out


_KIND_FIELDS = ("ops", "retrans", "timeouts", "rtt_ms", "execute_ms", "wire_bytes")


@dataclass
class _Building:
    head: dict
    options: str = ""
    in_opts: bool = False
    age: int | None = None
    byte_counters: tuple[int, ...] | None = None
    xprt: Xprt | None = None
    ops: list[Op] = field(default_factory=list)
    in_ops: bool = False
    error: str = ""


def _number(word: str, lineno: int) -> int:
    if not word.isdigit() or not word.isascii() or len(word) > MAX_DIGITS:
        raise ParseError(f"line {lineno}: {word[:24]!r} is not a counter")
    value = int(word)
    if value > MAX_U64:
        raise ParseError(f"line {lineno}: {word[:24]} is beyond a 64-bit counter")
    return value


def _split_device(device: str) -> tuple[str, str]:
    """``server:/export`` (``[v6]:/export`` for IPv6) -> (server, export)."""
    if device.startswith("["):
        end = device.find("]:")
        if end > 0:
            return device[1:end], device[end + 2 :]
    server, sep, export = device.partition(":")
    return (server, export) if sep else ("", device)


def _options(text: str) -> tuple[tuple[str, str], ...]:
    out = []
    for part in text.split(","):
        part = part.strip()
        if part:
            key, _, value = part.partition("=")
            out.append((key[:64], value[:256]))
    return tuple(out[:128])


def _version(options: dict[str, str], program_version: str) -> str:
    vers = options.get("vers") or options.get("nfsvers") or ""
    if vers == "4" and "minorversion" in options:
        vers = f"4.{options['minorversion']}"
    return vers or program_version


def _read_head(line: str, lineno: int) -> dict | None:
    """A ``device`` line of an NFS mount as a dict, None for other file systems."""
    rest = line[len("device ") :]
    device, sep, rest = rest.partition(" mounted on ")
    if not sep:
        raise ParseError(f"line {lineno}: a device line without 'mounted on'")
    mountpoint, sep, rest = rest.rpartition(" with fstype ")
    if not sep:
        raise ParseError(f"line {lineno}: a device line without 'with fstype'")
    words = rest.split()
    fstype = words[0] if words else ""
    if fstype not in NFS_TYPES:
        return None
    server, export = _split_device(device)
    return {
        "device": device[:MAX_NAME],
        "server": server[:253],
        "export": export[:MAX_NAME],
        "mountpoint": mountpoint[:MAX_NAME],
        "fstype": fstype,
    }


def _finish(b: _Building, program_version: str) -> Mount:
    options = _options(b.options)
    return Mount(
        **b.head,
        options=options,
        version=_version(dict(options), program_version),
        age_seconds=b.age,
        byte_counters=None if b.error else b.byte_counters,
        xprt=None if b.error else b.xprt,
        ops=() if b.error else tuple(b.ops),
        error=b.error,
    )


def _stat_line(b: _Building, key: str, value: str, lineno: int) -> str:
    """Reads one indented line of an NFS mount; returns the RPC program version it names."""
    words = value.split()
    if key == "opts":
        b.options, b.in_opts = value.strip(), True
    elif key == "age" and words:
        b.age = _number(words[0], lineno)
    elif key == "bytes":
        if len(words) != 8:
            raise ParseError(f"line {lineno}: 'bytes:' holds {len(words)} counters, not 8")
        b.byte_counters = tuple(_number(w, lineno) for w in words)
    elif key == "xprt":
        if len(words) < 8 or words[0] not in ("tcp", "udp", "rdma", "local", "tcp-tls"):
            raise ParseError(f"line {lineno}: an 'xprt:' line not of tcp, udp or rdma")
        n = [_number(w, lineno) for w in words[1:]]
        if words[0] == "udp":  # port, bind count, sends, recvs, bad xids, ...
            b.xprt = Xprt("udp", 0, n[2], n[3], n[4])
        else:  # port, bind, connect count, connect time, idle time, sends, recvs, bad xids
            b.xprt = Xprt(words[0], n[2], n[5], n[6], n[7])
    return ""


def _op_line(b: _Building, name: str, value: str, lineno: int) -> None:
    if not name.replace("_", "").isalnum() or len(name) > 32:
        raise ParseError(f"line {lineno}: {name[:32]!r} is not an operation name")
    words = value.split()
    if len(words) not in (8, 9):
        raise ParseError(f"line {lineno}: {name} holds {len(words)} counters, not 8 or 9")
    if len(b.ops) >= MAX_OPS:
        raise ParseError(f"line {lineno}: more than {MAX_OPS} operations in one mount")
    n = [_number(w, lineno) for w in words]
    b.ops.append(Op(name, *n[:8], errors=n[8] if len(n) == 9 else None))


def parse(text: str) -> tuple[Mount, ...]:
    """The NFS mounts of a mountstats text, in its order; ``ParseError`` for a text that is
    not mountstats or is beyond a bound."""
    if len(text) > MAX_BYTES:
        raise ParseError(f"the text is longer than {MAX_BYTES // 1024} KiB")
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        raise ParseError(f"the text has more than {MAX_LINES} lines")
    mounts: list[Mount] = []
    building: _Building | None = None
    program_version = ""
    devices = 0
    for lineno, line in enumerate(lines, 1):
        if len(line) > MAX_LINE:
            raise ParseError(f"line {lineno}: longer than {MAX_LINE} characters")
        if line.startswith("device "):
            devices += 1
            if building is not None:
                mounts.append(_finish(building, program_version))
            building, program_version = None, ""
            head = _read_head(line, lineno)
            if head is not None:
                if len(mounts) >= MAX_MOUNTS:
                    raise ParseError(f"line {lineno}: more than {MAX_MOUNTS} NFS mounts")
                building = _Building(head)
            continue
        if building is None or not line.strip():
            continue
        stripped = line.strip()
        key, sep, value = stripped.partition(":")
        if sep and not key.replace(" ", "").replace("_", "").replace("-", "").isalnum():
            key, sep, value = "", "", stripped  # not a "key:" line (IPv6 in wrapped opts)
        try:
            if stripped == "per-op statistics":
                building.in_ops, building.in_opts = True, False
            elif building.in_ops and sep:
                _op_line(building, key, value, lineno)
            elif building.in_opts and not sep and "=" in stripped:
                # opts wrapped onto the next line (as in some published samples)
                building.options = f"{building.options},{stripped}".strip(",")
            elif stripped.startswith("RPC iostats version:"):
                pv = stripped.partition("p/v:")[2].split()
                program_version = pv[0].partition("/")[2] if pv else ""
                building.in_opts = False
            elif sep:
                building.in_opts = key == "opts"
                _stat_line(building, key, value, lineno)
        except ParseError as exc:
            if not building.error:
                building.error = str(exc)
    if building is not None:
        mounts.append(_finish(building, program_version))
    if devices == 0:
        raise ParseError("no 'device … mounted on …' line: not a mountstats text")
    return tuple(mounts)


def digest(mount: Mount) -> dict:
    """What Vigil keeps of a mount at one push (and what tests compare): JSON-ready."""
    options = mount.option_map
    return {
        "device": mount.device,
        "server": mount.server,
        "export": mount.export,
        "mountpoint": mount.mountpoint,
        "fstype": mount.fstype,
        "version": mount.version,
        "options": options,
        "age_seconds": mount.age_seconds,
        "read_bytes": mount.read_bytes,
        "write_bytes": mount.write_bytes,
        "kinds": mount.kinds() if mount.ops else None,
        "xprt": None
        if mount.xprt is None
        else {
            "protocol": mount.xprt.protocol,
            "connects": mount.xprt.connects,
            "sends": mount.xprt.sends,
            "receives": mount.xprt.receives,
            "bad_xids": mount.xprt.bad_xids,
        },
        "ops": {
            op.name: [op.ops, op.transmissions - op.ops, op.timeouts, op.rtt_ms, op.execute_ms]
            for op in mount.ops
            if op.ops
        },
        "error": mount.error,
    }

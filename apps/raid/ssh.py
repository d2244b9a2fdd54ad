"""SSH adapter (asyncssh): read /proc/mdstat, ``mdadm --detail`` and the disks' SMART.

The only place that talks SSH: it runs the commands docs/raid.md lists ("SSH pull": mdstat,
``sudo -n mdadm --detail`` per array, one ``grep`` of the arrays' sysfs words, ``sudo -n
smartctl --json=c -a`` per disk, one ``find`` of the by-id and by-path links) and returns the
texts; ``report.py`` parses and judges them. A detail, a disk or the sysfs words that cannot be
had are a warning. The host key is always verified (the host's own known_hosts entry, else a
known_hosts file); the connection, each command and each output are bounded
(``connect_timeout``, ``command_timeout``, ``max_output`` counted while read); output is UTF-8
with undecodable bytes as lone surrogates. A failure raises ``SshError``, never naming the key.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from apps.lib import outbound
from apps.lib.formats import iec_bytes
from apps.raid.kernel import SYSFS_FILES
from apps.raid.topology import disk_of

if TYPE_CHECKING:  # asyncssh loads on the first collection, not with every worker and command
    import asyncssh

__all__ = ["Collected", "SshError", "SshTarget", "collect", "known_hosts_from_text"]

_ARRAY_LINE = re.compile(r"^\s*(md[A-Za-z0-9_]{1,30})\s*:", re.ASCII | re.MULTILINE)
_MEMBER_LINE = re.compile(r"^\s*md[A-Za-z0-9_]{1,30}\s*:(.*)$", re.ASCII | re.MULTILINE)
_MEMBER = re.compile(r"([A-Za-z0-9_-]{1,32})\[[0-9]{1,10}\]", re.ASCII)
_KEY_TYPE = re.compile(r"^(ssh-|ecdsa-|sk-)", re.ASCII)
MAX_OUTPUT = 1024 * 1024  # bytes a command may print (the push limit, VIGIL_PUSH_MAX_BYTES)
MAX_ERROR_OUTPUT = 64 * 1024  # bytes a command may print on stderr
DETAILS_AT_ONCE = 4  # sessions at a time on one connection (sshd allows 10 by default)
GREP_FOUND = frozenset({0, 1, 2})  # grep: lines found, none, or a file missing (no sync_action)
FIND_DONE = frozenset({0, 1})  # find: done, or a folder missing (no by-path on some hosts)
SMARTCTL_DONE = frozenset(range(256))  # its exit status is a bit mask of findings (smart.py)
DEVLINKS_COMMAND = [
    "find",
    "/dev/disk/by-id",
    "/dev/disk/by-path",
    "-maxdepth",
    "1",
    "-type",
    "l",
    "-printf",
    "%p -> %l\\n",
]
_PIECE = 64 * 1024


class SshError(Exception):
    """Collection over SSH failed; the message is safe to show."""


@dataclass(frozen=True)
class SshTarget:
    address: str
    port: int
    username: str
    known_hosts: str = ""  # known_hosts lines for this host; "" = use known_hosts_file
    known_hosts_file: str = ""  # "" = ~/.ssh/known_hosts
    client_key: str = field(default="", repr=False)  # private key text; "" = default keys
    passphrase: str = field(default="", repr=False)
    connect_timeout: float = 10.0
    command_timeout: float = 30.0
    total_timeout: float = 240.0  # the whole collection, however many arrays
    max_output: int = MAX_OUTPUT  # bytes one command may print
    policy: outbound.Policy | None = None  # the outbound guard's; None: from the settings


@dataclass(frozen=True)
class Collected:
    mdstat: str
    details: dict[str, str]
    warnings: tuple[str, ...] = ()
    sysfs: str = ""  # "/sys/block/md0/md/array_state:clean" lines
    smart: dict[str, str] = field(default_factory=dict)  # "sdc" -> smartctl --json -a text
    devlinks: str = ""  # "/dev/disk/by-id/NAME -> ../../sdc" lines


def known_hosts_from_text(text: str) -> asyncssh.SSHKnownHosts:
    """Parse known_hosts lines; a bare key (``ssh-ed25519 AAAA…``) applies to this host."""
    import asyncssh

    lines = []
    for line in text.splitlines():
        line = line.strip()
        if line and _KEY_TYPE.match(line):
            line = f"* {line}"
        lines.append(line)
    try:
        return asyncssh.import_known_hosts("\n".join(lines) + "\n")
    except (ValueError, asyncssh.KeyImportError) as exc:
        raise SshError(f"unreadable known_hosts entry: {exc}") from exc


def array_names(mdstat_text: str) -> list[str]:
    """The md device names a /proc/mdstat text lists (safe as a command argument)."""
    return _ARRAY_LINE.findall(mdstat_text)


def leaf_disks(mdstat_text: str) -> list[str]:
    """The whole disks under the arrays a /proc/mdstat text lists (``sdc1`` -> ``sdc``),
    arrays left out; each safe as a command argument."""
    arrays = set(array_names(mdstat_text))
    disks: dict[str, None] = {}
    for line in _MEMBER_LINE.findall(mdstat_text):
        for member in _MEMBER.findall(line):
            if member not in arrays:
                disks[disk_of(member) or member] = None
    return list(disks)


def smartctl_command(disk: str) -> list[str]:
    """``smartctl --json=c -a``: the JSON of ``--json -a`` without its indentation, a third
    of the size (the report is bounded by VIGIL_PUSH_MAX_BYTES)."""
    return ["sudo", "-n", "smartctl", "--json=c", "-a", f"/dev/{disk}"]


def sysfs_command(names: Sequence[str]) -> list[str]:
    """One grep over every array's sysfs words: it names each file it reads."""
    paths = [f"/sys/block/{name}/md/{attribute}" for name in names for attribute in SYSFS_FILES]
    return ["grep", "-s", ".", *paths]


def collect(target: SshTarget) -> Collected:
    """Connect, read /proc/mdstat and every array's ``mdadm --detail``; raise SshError."""
    return asyncio.run(_collect(target))


def _connect_options(target: SshTarget) -> dict[str, object]:
    import asyncssh

    if target.known_hosts.strip():
        known_hosts: object = known_hosts_from_text(target.known_hosts)
    elif target.known_hosts_file:
        known_hosts = target.known_hosts_file
    else:
        known_hosts = ()  # asyncssh's default: ~/.ssh/known_hosts, verified
    options: dict[str, object] = {
        "host": target.address,
        "port": target.port,
        "username": target.username,
        "known_hosts": known_hosts,
        "config": None,  # no ~/.ssh/config surprises
        "connect_timeout": target.connect_timeout,
    }
    if target.client_key:
        try:
            key = asyncssh.import_private_key(target.client_key, target.passphrase or None)
        except (ValueError, asyncssh.KeyImportError, asyncssh.KeyEncryptionError) as exc:
            raise SshError("the SSH client key (VIGIL_RAID_SSH_KEY) is unreadable") from exc
        options["client_keys"] = [key]
        options["agent_path"] = None
    return options


async def _collect(target: SshTarget) -> Collected:
    import asyncssh

    options = _connect_options(target)
    where = f"{target.username}@{target.address}:{target.port}"
    budget = asyncio.timeout(target.total_timeout)
    try:
        async with budget:
            return await _session(options, target)
    except outbound.OutboundRefused as exc:
        raise SshError(f"{where}: {exc}") from exc
    except asyncssh.HostKeyNotVerifiable as exc:
        raise SshError(f"{where}: host key not trusted ({exc.reason})") from exc
    except asyncssh.PermissionDenied as exc:
        raise SshError(f"{where}: login refused ({exc.reason})") from exc
    except asyncssh.DisconnectError as exc:
        raise SshError(f"{where}: disconnected ({exc.reason})") from exc
    except TimeoutError as exc:
        if budget.expired():
            raise SshError(f"{where}: collection took over {target.total_timeout:g} s") from exc
        raise SshError(
            f"{where}: no answer within {target.connect_timeout:g} s (connect timeout)"
        ) from exc
    except OSError as exc:
        raise SshError(f"{where}: {exc.strerror or exc}") from exc
    except asyncssh.Error as exc:
        raise SshError(f"{where}: {exc.reason}") from exc


async def _session(options: dict[str, object], target: SshTarget) -> Collected:
    """mdstat first, then every array's detail, a few at a time over the one connection."""
    import asyncssh

    sock = await _open_socket(target)
    async with asyncssh.connect(**options, sock=sock) as conn:
        mdstat = await _run(
            conn, ["cat", "/proc/mdstat"], target.command_timeout, target.max_output
        )
        parallel = asyncio.Semaphore(DETAILS_AT_ONCE)

        async def detail(name: str) -> tuple[str, str | None, str | None]:
            command = ["sudo", "-n", "mdadm", "--detail", f"/dev/{name}"]
            async with parallel:
                try:
                    output = await _run(conn, command, target.command_timeout, target.max_output)
                    return name, output, None
                except SshError as exc:
                    return name, None, f"mdadm --detail /dev/{name}: {exc}"

        async def smart(disk: str) -> tuple[str, str | None, str | None]:
            command = smartctl_command(disk)
            async with parallel:
                try:
                    output = await _run(
                        conn, command, target.command_timeout, target.max_output, SMARTCTL_DONE
                    )
                except SshError as exc:
                    return disk, None, str(exc).replace(f"/dev/{disk}", "/dev/…")
            if not output.strip():  # sudo refused it, or smartctl is not installed
                return disk, None, "printed nothing (the sudo rule? smartmontools 7 or later?)"
            return disk, output, None

        names = array_names(mdstat)
        results = await asyncio.gather(*(detail(name) for name in names))
        disks = await asyncio.gather(*(smart(disk) for disk in leaf_disks(mdstat)))
        sysfs, devlinks, problems = await _sysfs_and_links(conn, target, names, bool(disks))
    details = {name: text for name, text, _ in results if text is not None}
    warnings = tuple(warning for _, _, warning in results if warning)
    warnings += _grouped(disks) + tuple(problems)
    return Collected(
        mdstat=mdstat,
        details=details,
        warnings=warnings,
        sysfs=sysfs,
        smart={disk: text for disk, text, _ in disks if text is not None},
        devlinks=devlinks,
    )


async def _sysfs_and_links(
    conn: asyncssh.SSHClientConnection, target: SshTarget, names: list[str], disks: bool
) -> tuple[str, str, list[str]]:
    """The sysfs words of the arrays ``names`` and, when there are ``disks``, their by-id
    links: each "" when it could not be read, with a problem to warn of, never an error."""
    sysfs, devlinks, problems = "", "", []
    if names:
        command = sysfs_command(names)
        try:
            sysfs = await _run(conn, command, target.command_timeout, target.max_output, GREP_FOUND)
        except SshError as exc:
            problems.append(f"the arrays' sysfs files: {exc}")
    if disks:
        try:
            devlinks = await _run(
                conn, DEVLINKS_COMMAND, target.command_timeout, target.max_output, FIND_DONE
            )
        except SshError as exc:
            problems.append(f"/dev/disk/by-id: {exc}")
    return sysfs, devlinks, problems


def _grouped(disks: Sequence[tuple[str, str | None, str | None]]) -> tuple[str, ...]:
    """One warning per way smartctl failed, naming the disks (a host without smartmontools
    fails the same way for each of them)."""
    failed: dict[str, list[str]] = {}
    for disk, _, problem in disks:
        if problem:
            failed.setdefault(problem, []).append(disk)
    return tuple(
        f"smartctl on {', '.join(names[:5])}{' …' if len(names) > 5 else ''}: {problem}"
        for problem, names in failed.items()
    )


async def _open_socket(target: SshTarget) -> socket.socket:
    """TCP to an address of the host that the outbound guard accepts (resolved once: the host
    key is still checked against the name, and the name is never looked up again)."""
    policy = target.policy or outbound.Policy.from_settings()
    last_error: OSError | None = None
    async with asyncio.timeout(target.connect_timeout):
        for address in await outbound.resolve_async(target.address, target.port, policy):
            sock = socket.socket(address.family, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                await asyncio.get_running_loop().sock_connect(sock, address.sockaddr)
            except OSError as error:
                sock.close()
                last_error = error
                continue
            return sock
    assert last_error is not None
    raise last_error


async def _run(
    conn: asyncssh.SSHClientConnection,
    argv: Sequence[str],
    timeout: float,
    max_output: int = MAX_OUTPUT,
    succeeded: frozenset[int] = frozenset({0}),
) -> str:
    """Run one command; its output read in pieces and refused past ``max_output`` bytes; an
    exit status outside ``succeeded`` is an SshError."""
    command = shlex.join(argv)
    try:
        async with asyncio.timeout(timeout):
            async with conn.create_process(command, encoding=None) as process:
                errors = asyncio.create_task(_read_capped(process.stderr, MAX_ERROR_OUTPUT))
                try:
                    stdout = await _read_capped(process.stdout, max_output)
                    if stdout is None:  # leaving closes the channel: sshd ends the command
                        raise SshError(f"{command!r} printed more than {iec_bytes(max_output)}")
                    stderr = await errors
                finally:
                    errors.cancel()
                await process.wait()
                status = process.exit_status
    except TimeoutError as exc:
        raise SshError(f"{command!r} did not finish within {timeout:g} s") from exc
    if status not in succeeded:
        error = (stderr or b"").decode("utf-8", errors="replace")
        error = " ".join(error.split())[:300] or f"exit status {status}"
        raise SshError(f"{command!r} failed: {error}")
    return stdout.decode("utf-8", errors="surrogateescape")


async def _read_capped(stream: asyncssh.SSHReader, limit: int) -> bytes | None:
    """Everything ``stream`` gives, or None as soon as it passes ``limit`` bytes."""
    pieces: list[bytes] = []
    size = 0
    while piece := await stream.read(_PIECE):
        size += len(piece)
        if size > limit:
            return None
        pieces.append(piece)
    return b"".join(pieces)

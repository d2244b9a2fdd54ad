"""SSH adapter (asyncssh): read /proc/mdstat and ``mdadm --detail`` from a host.

The only place that talks SSH. It runs ``cat /proc/mdstat``, then
``sudo -n mdadm --detail /dev/mdX`` for each array it lists, and returns the texts; parsing and
judging happen elsewhere (``report.py``). The host key is always verified: against the host's
own known_hosts entry when it has one, else against a known_hosts file. Each step is bounded:
the connection (TCP, key exchange and login) by ``connect_timeout``, each command by
``command_timeout``. A failure raises ``SshError`` with a message for the host page; the
client key never appears in it.

On the monitored host, a restricted user and one sudo rule are enough (README, "md-RAID").
"""

from __future__ import annotations

import asyncio
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

import asyncssh

__all__ = ["Collected", "SshError", "SshTarget", "collect", "known_hosts_from_text"]

_ARRAY_LINE = re.compile(r"^\s*(md[A-Za-z0-9_]{1,30})\s*:", re.ASCII | re.MULTILINE)
_KEY_TYPE = re.compile(r"^(ssh-|ecdsa-|sk-)", re.ASCII)
MAX_OUTPUT = 1_000_000
DETAILS_AT_ONCE = 4  # sessions at a time on one connection (sshd allows 10 by default)


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


@dataclass(frozen=True)
class Collected:
    mdstat: str
    details: dict[str, str]
    warnings: tuple[str, ...] = ()


def known_hosts_from_text(text: str) -> asyncssh.SSHKnownHosts:
    """Parse known_hosts lines; a bare key (``ssh-ed25519 AAAA…``) applies to this host."""
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


def collect(target: SshTarget) -> Collected:
    """Connect, read /proc/mdstat and every array's ``mdadm --detail``; raise SshError."""
    return asyncio.run(_collect(target))


def _connect_options(target: SshTarget) -> dict[str, object]:
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
    options = _connect_options(target)
    where = f"{target.username}@{target.address}:{target.port}"
    budget = asyncio.timeout(target.total_timeout)
    try:
        async with budget:
            return await _session(options, target)
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
    async with asyncssh.connect(**options) as conn:
        mdstat = await _run(conn, ["cat", "/proc/mdstat"], target.command_timeout)
        parallel = asyncio.Semaphore(DETAILS_AT_ONCE)

        async def detail(name: str) -> tuple[str, str | None, str | None]:
            command = ["sudo", "-n", "mdadm", "--detail", f"/dev/{name}"]
            async with parallel:
                try:
                    return name, await _run(conn, command, target.command_timeout), None
                except SshError as exc:
                    return name, None, f"mdadm --detail /dev/{name}: {exc}"

        results = await asyncio.gather(*(detail(name) for name in array_names(mdstat)))
    details = {name: text for name, text, _ in results if text is not None}
    warnings = tuple(warning for _, _, warning in results if warning)
    return Collected(mdstat=mdstat, details=details, warnings=warnings)


async def _run(conn: asyncssh.SSHClientConnection, argv: Sequence[str], timeout: float) -> str:
    command = shlex.join(argv)
    try:
        result = await conn.run(command, check=False, timeout=timeout)
    except asyncssh.TimeoutError as exc:
        raise SshError(f"{command!r} did not finish within {timeout:g} s") from exc
    output = result.stdout if isinstance(result.stdout, str) else ""
    if result.exit_status != 0:
        error = result.stderr if isinstance(result.stderr, str) else ""
        error = " ".join(error.split())[:300] or f"exit status {result.exit_status}"
        raise SshError(f"{command!r} failed: {error}")
    if len(output) > MAX_OUTPUT:
        raise SshError(f"{command!r} printed more than {MAX_OUTPUT} characters")
    return output

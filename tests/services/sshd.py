"""A real OpenSSH server on loopback for the SSH collection tests.

``Sshd.start()`` writes a throwaway host key, a client key, an ``authorized_keys`` file and a
forced command into a temporary folder, and runs ``/usr/sbin/sshd -D -e -f sshd_config`` as a
child process (tracked by its PID, stopped by ``stop()``). The test user (``vigiltest``,
created with ``useradd`` if missing; when the tests do not run as root, the user running
them) may only run the forced command, which answers
``cat /proc/mdstat``, ``sudo -n mdadm --detail /dev/mdX``, ``sudo -n smartctl --json=c -a
/dev/sdX`` (exit status 4, as smartctl with a finding; without a file, as a host without
smartmontools) and the ``find`` of /dev/disk/by-id with files from ``replies/`` that the test
writes, and ``grep -s . /sys/block/mdX/md/...`` by running grep itself over
``replies/sys`` (the test's copy of /sys), its file names printed as on a host;
``replies/delay`` makes it sleep first (for timeouts).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import asyncssh

from tests.services import free_port, machine_lock

SSHD = "/usr/sbin/sshd"
USER = "vigiltest"

FORCED_COMMAND = """#!/bin/sh
# Answer Vigil's two commands from files the test wrote; refuse anything else.
replies="{replies}"
if [ -f "$replies/delay" ]; then sleep "$(cat "$replies/delay")"; fi
case "$SSH_ORIGINAL_COMMAND" in
  "cat /proc/mdstat") exec cat "$replies/mdstat" ;;
  "sudo -n mdadm --detail /dev/"*)
    name="${{SSH_ORIGINAL_COMMAND#sudo -n mdadm --detail /dev/}}"
    case "$name" in *[!A-Za-z0-9_]*|"") echo "bad device" >&2; exit 2 ;; esac
    if [ -e "$replies/detail-$name" ]; then exec cat "$replies/detail-$name"; fi
    echo "mdadm: cannot open /dev/$name: No such file or directory" >&2; exit 1 ;;
  "sudo -n smartctl --json=c -a /dev/"*)
    name="${{SSH_ORIGINAL_COMMAND#sudo -n smartctl --json=c -a /dev/}}"
    case "$name" in *[!A-Za-z0-9_-]*|"") echo "bad device" >&2; exit 2 ;; esac
    if [ -e "$replies/smart-$name" ]; then cat "$replies/smart-$name"; exit 4; fi
    echo "sudo: smartctl: command not found" >&2; exit 1 ;;
  "find /dev/disk/by-id /dev/disk/by-path -maxdepth 1 -type l -printf '%p -> %l\\n'")
    if [ -e "$replies/devlinks" ]; then exec cat "$replies/devlinks"; fi
    exit 0 ;;
  "grep -s . /sys/block/"*)
    set -f
    # shellcheck disable=SC2086
    set -- ${{SSH_ORIGINAL_COMMAND#grep -s . }}
    for path; do
      case "$path" in /sys/block/md*/md/*) ;; *) echo "not allowed: $path" >&2; exit 2 ;; esac
      case "$path" in *..*|*[!A-Za-z0-9_/]*) echo "not allowed: $path" >&2; exit 2 ;; esac
      shift; set -- "$@" "${{path#/}}"
    done
    cd "$replies" || exit 2
    found=$(grep -s . "$@"); status=$?
    [ -n "$found" ] && printf '%s\n' "$found" | sed 's#^#/#'
    exit "$status" ;;
  *) echo "not allowed: $SSH_ORIGINAL_COMMAND" >&2; exit 1 ;;
esac
"""

CONFIG = """Port {port}
ListenAddress 127.0.0.1
HostKey {folder}/host_key
PidFile none
UsePAM no
StrictModes no
AuthorizedKeysFile {folder}/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
AllowUsers {user}
ForceCommand {folder}/forced-command
DisableForwarding yes
PermitTTY no
LoginGraceTime 20
LogLevel VERBOSE
"""


def ensure_user(name: str = USER) -> None:
    """Create the test user once (no home, login by key only); idempotent, and once at a time
    (``make test``'s two workers may both start an sshd)."""
    with machine_lock("useradd"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            # "*" rather than useradd's "!": with UsePAM no, sshd refuses "!" as a locked account
            subprocess.run(
                ["useradd", "--no-create-home", "--shell", "/bin/sh", "--password", "*", name],
                check=True,
            )


class Sshd:
    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="vigil-sshd-"))
        self.replies = self.folder / "replies"
        self.port = 0
        self.user = USER
        self.process: subprocess.Popen[bytes] | None = None
        self.host_key = asyncssh.generate_private_key("ssh-ed25519")
        self.client_key = asyncssh.generate_private_key("ssh-ed25519")

    @property
    def known_hosts_line(self) -> str:
        public = self.host_key.export_public_key("openssh").decode().strip()
        return f"[127.0.0.1]:{self.port} {public}"

    @property
    def client_key_text(self) -> str:
        return self.client_key.export_private_key("openssh").decode()

    def start(self) -> Sshd:
        if os.geteuid() == 0:
            ensure_user()
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation dir
        else:
            # sshd started by another user can only log that same user in
            self.user = pwd.getpwuid(os.geteuid()).pw_name
        self.folder.chmod(0o755)  # the test user reads the forced command and its replies
        self.replies.mkdir(mode=0o755)
        self.host_key.write_private_key(self.folder / "host_key")
        (self.folder / "host_key").chmod(0o600)
        (self.folder / "authorized_keys").write_text(
            self.client_key.export_public_key("openssh").decode()
        )
        command = self.folder / "forced-command"
        command.write_text(FORCED_COMMAND.format(replies=self.replies))
        command.chmod(0o755)
        self.port = free_port()
        config = self.folder / "sshd_config"
        config.write_text(CONFIG.format(port=self.port, folder=self.folder, user=self.user))
        log = (self.folder / "sshd.log").open("wb")
        self.process = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT
        )
        self._wait_until_listening()
        return self

    def _wait_until_listening(self) -> None:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"sshd exited: {self.log()}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=1),
            ):
                return
            time.sleep(0.05)
        raise RuntimeError(f"sshd did not listen: {self.log()}")

    def log(self) -> str:
        return (self.folder / "sshd.log").read_text(errors="replace")

    def reply(
        self,
        mdstat: str,
        details: dict[str, str] | None = None,
        delay: float = 0,
        sysfs: dict[str, dict[str, str]] | None = None,
        smart: dict[str, str] | None = None,
        devlinks: str = "",
    ) -> None:
        """What the next connections are answered: files the forced command prints;
        ``sysfs`` is ``{"md0": {"array_state": "clean", ...}}`` under ``replies/sys``,
        ``smart`` is ``{"sdc": "<smartctl's JSON>"}``, ``devlinks`` the find's lines."""
        shutil.rmtree(self.replies / "sys", ignore_errors=True)
        for old in self.replies.iterdir():
            old.unlink()
        (self.replies / "mdstat").write_text(mdstat)
        for name, text in (details or {}).items():
            (self.replies / f"detail-{name}").write_text(text)
        for name, text in (smart or {}).items():
            (self.replies / f"smart-{name}").write_text(text)
        if devlinks:
            (self.replies / "devlinks").write_text(devlinks)
        for name, words in (sysfs or {}).items():
            folder = self.replies / "sys" / "block" / name / "md"
            folder.mkdir(parents=True)
            for attribute, word in words.items():
                (folder / attribute).write_text(f"{word}\n")
        if delay:
            (self.replies / "delay").write_text(f"{delay:g}")
        for path in self.replies.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)

    def reply_raw(self, mdstat: bytes | None = None, *, endless: bool = False) -> None:
        """Answer ``cat /proc/mdstat`` with these bytes, or (``endless``) with /dev/zero."""
        self.reply("")
        target = self.replies / "mdstat"
        if endless:
            target.unlink()
            target.symlink_to("/dev/zero")
        else:
            target.write_bytes(mdstat or b"")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, 15)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, 9)
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


class SilentServer:
    """Accepts TCP connections and never says a word (an SSH server that hangs)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]

    def close(self) -> None:
        self.sock.close()

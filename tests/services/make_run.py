"""``make run`` (``python -m config.run``) started as a person, a script or a service manager
would start it, on free loopback ports with a private var directory (its own SQLite, broker and
beat schedule), and stopped the same ways.

``MakeRun(var_dir, demo=True, sigint_ignored=False, database=None)``: ``start()`` waits until the web server
answers; ``processes()`` lists every process of its session (the starter, the worker);
``signal(SIGINT)`` sends to the starter alone (``kill -INT <pid>``), ``signal(SIGINT,
group=True)`` to its process group (Ctrl-C at a terminal); ``wait_stopped()`` waits until the
whole session is gone and returns the exit status. ``output()`` is what it printed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

from tests.services import free_port, vigil_env, wait_for

ROOT = Path(__file__).resolve().parents[2]


def free_ports(span: int) -> int:
    """A loopback port with ``span - 1`` free ports after it (the demo's probe servers)."""
    while True:
        port = free_port()
        if port + span < 65535 and all(_free(p) for p in range(port + 1, port + span)):
            return port


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def session_processes(sid: int) -> list[int]:
    """The live (not zombie) processes of session ``sid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        state, session = fields[0], int(fields[3])
        if session == sid and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


class MakeRun:
    def __init__(
        self,
        var_dir: Path,
        *,
        demo: bool = True,
        sigint_ignored: bool = False,
        database: Path | None = None,
        **env: str,
    ) -> None:
        """``database``: a migrated SQLite file to start from (a copy), not an empty one."""
        self.var_dir = var_dir
        self.database = database
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = var_dir / "make-run.log"
        self.sigint_ignored = sigint_ignored
        self.env = vigil_env(
            VIGIL_DEMO="true" if demo else "false",
            VIGIL_VAR_DIR=str(var_dir),
            VIGIL_WEB_PORT=str(self.port),
            VIGIL_DEMO_AWS_PORT=str(free_port()),
            VIGIL_DEMO_PROBES_PORT=str(free_ports(8)),
            VIGIL_ADMIN_PASSWORD=env.pop("VIGIL_ADMIN_PASSWORD", "first-hour-admin"),
            **env,
        )
        self.env.pop("CELERY_BROKER_URL", None)
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 180) -> MakeRun:
        def as_started() -> None:
            # A background job of a non-interactive shell (``make run &`` in a script) starts
            # with SIGINT ignored; its own session keeps this run's processes apart.
            if self.sigint_ignored:
                signal.signal(signal.SIGINT, signal.SIG_IGN)

        self.var_dir.mkdir(parents=True, exist_ok=True)
        if self.database is not None and not (self.var_dir / "vigil.sqlite3").exists():
            shutil.copyfile(self.database, self.var_dir / "vigil.sqlite3")
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "config.run"],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=as_started,
        )
        log.close()
        wait_for(self._answers, timeout, f"make run at {self.url} ({self.log_path})")
        return self

    def _answers(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise AssertionError(f"make run ended with {self.process.returncode}:\n{self.output()}")
        try:
            urllib.request.urlopen(f"{self.url}/healthz", timeout=2).close()
        except OSError:
            return False
        return True

    def processes(self) -> list[int]:
        assert self.process is not None
        return session_processes(self.process.pid)

    def signal(self, signum: int, *, group: bool = False) -> None:
        assert self.process is not None
        if group:
            os.killpg(self.process.pid, signum)
        else:
            self.process.send_signal(signum)

    def wait_stopped(self, timeout: float = 60) -> int:
        """The exit status once every process of the run is gone."""
        assert self.process is not None
        wait_for(
            lambda: self.process.poll() is not None and not self.processes(),
            timeout,
            f"every process of make run to stop ({self.log_path})",
            interval=0.2,
        )
        return self.process.returncode

    def kill(self) -> None:
        """Whatever is left of this run (its own session only)."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        for pid in self.processes():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait()

    def output(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

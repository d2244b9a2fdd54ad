"""What ``make run`` holds in memory: each process's proportional set size (PSS) and resident
set size (RSS, what ``ps`` and ``top`` show), and the totals.

Starts ``python -m config.run`` in demo mode on free ports with a private var directory (its own
SQLite, broker and beat schedule), waits until the web server answers and then ``--wait``
seconds (a minute by default: a few collection cycles), reads ``Pss`` from
``/proc/<pid>/smaps_rollup`` for the starter and every process under it, and prints them. Then
it presses Ctrl-C (SIGINT to the process group, as a terminal does) and says whether every
process stopped, and how long that took. Proportional: a page shared by n processes counts 1/n
in each, so the PSS total is what the whole of ``make run`` costs the machine; the RSS total
counts shared pages (the interpreter, the libraries both processes load) once per process, so it
is more than the machine gives, and is what a user adding up ``ps`` sees.

    .venv/bin/python bench/memory.py [--wait 60] [--tiny]

``--tiny`` reads the processes as soon as the web server answers (``--wait 0``).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.environment import parse_args  # noqa: E402

GOAL_MB = 500
TINY = {"wait": 0.0}


def free_port(span: int = 1) -> int:
    """A loopback port with ``span - 1`` free ports after it (the demo probes take a few)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + span < 65535 and all(_free(p) for p in range(port + 1, port + span)):
            return port


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        queue.extend(children.get(current, []))
    return found


def memory_kb(pid: int) -> tuple[int, int]:
    """(PSS, RSS) of ``pid`` in KiB, from /proc/<pid>/smaps_rollup."""
    found = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("Pss", "Rss"):
            found[name] = int(rest.split()[0])
    return found.get("Pss", 0), found.get("Rss", 0)


def label(pid: int) -> str:
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    words = [a.decode() for a in argv if a]
    words[0] = Path(words[0]).name
    return " ".join(words)[:110]


def wait_for_web(url: str, process: subprocess.Popen, timeout: float = 180) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if process.poll() is not None:
            sys.exit(f"make run stopped with status {process.returncode}")
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return time.monotonic() - started
        except OSError:
            time.sleep(0.5)
    sys.exit(f"{url} did not answer within {timeout:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wait", type=float, default=60, help="seconds after the web answers")
    parser.add_argument("--log", type=Path, help="keep what make run printed in this file")
    args = parse_args(parser, TINY)

    web = free_port()
    with tempfile.TemporaryDirectory(prefix="vigil-memory-") as var:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("VIGIL_", "DATABASE_"))}
        env.pop("CELERY_BROKER_URL", None)
        env.update(
            VIGIL_DEMO="true",
            VIGIL_VAR_DIR=var,
            VIGIL_WEB_PORT=str(web),
            VIGIL_DEMO_AWS_PORT=str(free_port()),
            VIGIL_DEMO_PROBES_PORT=str(free_port(span=8)),
            DJANGO_SETTINGS_MODULE="config.settings.base",
        )
        log = open(Path(var) / "run.log", "w")  # noqa: SIM115 (closed below)
        process = subprocess.Popen(
            [sys.executable, "-m", "config.run"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            up = wait_for_web(f"http://127.0.0.1:{web}/healthz", process)
            print(f"web answered {up:.1f} s after the start; waiting {args.wait:.0f} s")
            time.sleep(args.wait)
            if process.poll() is not None or len(descendants(process.pid)) < 2:
                log.flush()
                tail = (Path(var) / "run.log").read_text().splitlines()[-30:]
                sys.exit("make run lost a process; its last lines:\n" + "\n".join(tail))
            rows = []
            for pid in descendants(process.pid):
                try:
                    rows.append((*memory_kb(pid), pid, label(pid)))
                except OSError:
                    continue
        finally:
            pressed = time.monotonic()
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            stopped = time.monotonic() - pressed
            log.close()
            if args.log:
                args.log.write_text((Path(var) / "run.log").read_text())
        left = [pid for _, _, pid, _ in rows if Path(f"/proc/{pid}").exists()]

    print(f"{'PSS MB':>7}  {'RSS MB':>7}  {'pid':>7}  process")
    for pss, rss, pid, name in rows:
        print(f"{pss / 1024:7.1f}  {rss / 1024:7.1f}  {pid:7d}  {name}")
    pss_total = sum(row[0] for row in rows) / 1024
    rss_total = sum(row[1] for row in rows) / 1024
    print(
        f"{pss_total:7.1f}  {rss_total:7.1f}  total of {len(rows)} processes "
        f"(PSS goal ≤ {GOAL_MB} MB; RSS adds up the pages they share once per process)"
    )
    print(
        f"Ctrl-C stopped every process in {stopped:.1f} s"
        if not left
        else f"still running after Ctrl-C: {left}"
    )


if __name__ == "__main__":
    main()

"""``make run``: Vigil on one machine with nothing to install, in two processes.

Migrates, creates the first admin, decides demo mode, then becomes the web server (Django's
development server, in this process) with Celery beat as a thread beside it, and starts one
Celery worker as a child (a thread pool of two: one process, not a prefork parent and its
children). Ctrl-C, ``kill -INT`` or ``kill -TERM`` stops both within seconds, whatever the
signal state this process inherited (a script's background job starts with SIGINT ignored);
when the worker stops on its own, so does the rest. The embedded
defaults are SQLite and kombu's filesystem broker in ``var/`` (``VIGIL_VAR_DIR``). In demo mode
this process also serves the embedded AWS stand-in on loopback, discovers the demo account's
regions before the first page is served, and holds open the concerns' demo services (the
probes' loopback servers).

Production runs the same three roles apart (docker-compose.yml: gunicorn, prefork workers per
queue, one beat); this layout is for one machine, where each Python process costs ~100 MB.
``bench/memory.py`` measures it.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack, suppress

import django

#: How long the worker may take to finish the tasks under way once asked to stop (Celery's warm
#: shutdown), then to stop without them (its cold shutdown), before it is killed. A keep-alive
#: probe can hold a task for minutes: the stop does not wait for it (probe batches are not
#: acknowledged until they end, and every task is safe to run twice).
WARM_STOP_S = 2.0
COLD_STOP_S = 2.0
BEAT_JOIN_S = 1.0


class Stop:
    """Why ``make run`` is stopping: a signal (SIGINT or SIGTERM, from a terminal, a script or a
    service manager), or the worker that stopped on its own."""

    def __init__(self) -> None:
        self.requested = threading.Event()
        self.by_signal: int | None = None
        self.worker_gone = False  # the worker stopped on its own
        self.hurry = threading.Event()  # a second signal: kill the worker without waiting
        self.on_stop: list[Callable[[], object]] = []  # told at once, before anything waits

    def handle(self, signum: int, frame: object) -> None:
        """The handler of SIGINT and SIGTERM, in the main thread: the first one stops the web
        server (Django's runserver ends on KeyboardInterrupt), a second one hurries the rest."""
        if self.requested.is_set():
            self.hurry.set()
            return
        self.requested.set()
        if not self.worker_gone:
            self.by_signal = signum
        raise KeyboardInterrupt

    def install(self) -> None:
        # Whatever was inherited: a background job of a non-interactive shell starts with SIGINT
        # ignored, and Python then never turns it into KeyboardInterrupt.
        signal.signal(signal.SIGINT, self.handle)
        signal.signal(signal.SIGTERM, self.handle)


def main() -> None:
    stop = Stop()
    stop.install()
    try:
        code = run(stop)
    except KeyboardInterrupt:  # a signal before the web server started
        code = 0 if not stop.worker_gone else 1
    if stop.by_signal is not None:
        print(f"Vigil stopped ({signal.Signals(stop.by_signal).name}).", flush=True)
    # Everything this process started has been stopped above; the interpreter's own teardown
    # of the demo's in-memory AWS (moto's backends) took seconds more, for nothing.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run(stop: Stop) -> int:
    """Start everything, serve until a signal or the worker's end; the exit status."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    started = time.monotonic()
    django.setup()

    # Django's and the apps' modules once django.setup() above has run
    from django.conf import settings
    from django.core.management import call_command

    from apps.demo.mode import demo_enabled
    from apps.regions import concerns
    from apps.regions.demo import ensure_demo_account
    from config.celery_app import all_queues, app, command

    (settings.VAR_DIR / "static").mkdir(parents=True, exist_ok=True)
    for folder in ("queue", "processed", "control"):
        (settings.VAR_DIR / "broker" / folder).mkdir(parents=True, exist_ok=True)
    call_command("migrate", interactive=False, verbosity=0)
    call_command("ensure_admin")

    demo = demo_enabled()
    os.environ["VIGIL_DEMO"] = "true" if demo else "false"
    ensure_demo_account(demo)
    with ExitStack() as running:
        mode = "AWS credentials found"
        if demo:
            standin = _start_demo_aws(settings.VIGIL_DEMO_AWS_PORT)
            running.callback(standin.stop)
            mode = f"demo mode (AWS stand-in at {standin.url})"
            for concern in concerns.registered():
                if concern.demo_runtime is not None:
                    running.enter_context(concern.demo_runtime())

        from celery.beat import EmbeddedService

        beat = EmbeddedService(
            app, thread=True, schedule_filename=str(settings.VAR_DIR / "celerybeat-schedule")
        )
        beat.start()
        # Beat sleeps until its next due entry (up to 30 s): told to stop when the stop begins,
        # it is waited for last and briefly (a daemon thread; an entry sent twice is harmless).
        running.callback(beat.join, BEAT_JOIN_S)
        stop.on_stop.append(lambda: beat.service.stop(wait=False))

        queues = ",".join(all_queues(settings.VIGIL_REGION_QUEUES))
        worker = subprocess.Popen(
            command("worker", "-l", "INFO")
            + ["-Q", queues, "--pool", "threads", "--concurrency", "2", "-n", "vigil@%h"],
            env=dict(os.environ),
        )
        running.callback(_stop, worker, stop)
        threading.Thread(target=_stop_when_gone, args=(worker, stop), daemon=True).start()

        port = settings.VIGIL_WEB_PORT
        print(
            f"\nVigil is starting at http://127.0.0.1:{port}/ — {mode}; "
            f"ready steps took {time.monotonic() - started:.1f} s. Ctrl-C stops it.\n",
            flush=True,
        )
        with suppress(SystemExit, KeyboardInterrupt):  # the server's own exit on a signal
            call_command("runserver", f"127.0.0.1:{port}", use_reloader=False)
    # Asked to stop, all is well (make prints no error); a worker that stopped on its own is not.
    return 0 if stop.by_signal is not None else (worker.returncode or 1)


def _stop_when_gone(worker: subprocess.Popen, stop: Stop) -> None:
    """A worker that stops on its own takes the web server and beat with it."""
    worker.wait()
    if not stop.requested.is_set():
        stop.worker_gone = True
        os.kill(os.getpid(), signal.SIGINT)  # to our own handler: runserver ends


def _stop(worker: subprocess.Popen, stop: Stop) -> None:
    """Stop the worker within seconds: Celery's warm shutdown (SIGTERM: the tasks under way may
    finish; at a terminal Ctrl-C has reached it already, in the same process group), then its
    cold shutdown (SIGQUIT), then SIGKILL; a second signal to this process skips the waits."""
    stop.requested.set()
    for tell in stop.on_stop:
        tell()
    for signum, grace in (
        (signal.SIGTERM, WARM_STOP_S),
        (signal.SIGQUIT, COLD_STOP_S),
        (signal.SIGKILL, None),
    ):
        if worker.poll() is not None:
            return
        worker.send_signal(signum)
        if grace is None:
            worker.wait()
            return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and not stop.hurry.is_set():
            try:
                worker.wait(0.2)
                return
            except subprocess.TimeoutExpired:
                continue


def _start_demo_aws(port: int):
    import importlib.util

    if importlib.util.find_spec("moto") is None:  # the production image leaves it out
        sys.exit(
            "Demo mode needs moto (requirements/demo.txt, which make run installs): give AWS "
            "credentials, or set VIGIL_DEMO=false, to run without it."
        )
    # only in demo mode, once run() has set Django up
    from apps.demo.mode import set_up_demo_fleet
    from apps.demo.standin import AwsStandIn
    from apps.lib import aws
    from apps.regions.models import Account
    from apps.regions.tasks import discover_regions

    standin = AwsStandIn(port=port)
    url = standin.start()
    os.environ["AWS_ENDPOINT_URL"] = url
    from django.conf import settings

    settings.AWS_ENDPOINT_URL = url
    aws.clear_cache()
    from django.utils import timezone

    for account_id in Account.claim_due_discoveries(timezone.now()):
        discover_regions(account_id)
    set_up_demo_fleet()
    return standin


if __name__ == "__main__":
    main()

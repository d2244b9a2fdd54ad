"""``make run``: Vigil on one machine with nothing to install, in two processes.

Migrates, creates the first admin, decides demo mode, then becomes the web server (Django's
development server, in this process) with Celery beat as a thread beside it, and starts one
Celery worker as a child (a thread pool of two: one process, not a prefork parent and its
children). Ctrl-C stops both; when the worker stops on its own, so does the rest. The embedded
defaults are SQLite and kombu's filesystem broker in ``var/`` (``VIGIL_VAR_DIR``). In demo mode
this process also serves the embedded AWS stand-in on loopback, discovers the demo account's
regions before the first page is served, and holds open the concerns' demo services (the
probes' loopback servers).

Production runs the same three roles apart (docker-compose.yml: gunicorn, prefork workers per
queue, one beat); this layout is for one machine, where each Python process costs ~100 MB.
``bench/memory.py`` measures it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import ExitStack, suppress

import django


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    started = time.monotonic()
    django.setup()

    from django.conf import settings
    from django.core.management import call_command

    from apps.demo.mode import demo_enabled, ensure_demo_account
    from apps.regions import concerns
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

        queues = ",".join(all_queues(settings.VIGIL_REGION_QUEUES))
        worker = subprocess.Popen(
            command("worker", "-l", "INFO")
            + ["-Q", queues, "--pool", "threads", "--concurrency", "2", "-n", "vigil@%h"],
            env=dict(os.environ),
        )
        stopping = threading.Event()
        running.callback(_stop, worker, stopping)
        threading.Thread(target=_stop_when_gone, args=(worker, stopping), daemon=True).start()

        from celery.beat import EmbeddedService

        beat = EmbeddedService(
            app, thread=True, schedule_filename=str(settings.VAR_DIR / "celerybeat-schedule")
        )
        beat.start()
        running.callback(beat.stop)

        # SIGTERM (a service manager, a closed terminal) stops as cleanly as Ctrl-C does.
        signal.signal(signal.SIGTERM, lambda *_: signal.raise_signal(signal.SIGINT))
        port = settings.VIGIL_WEB_PORT
        print(
            f"\nVigil is starting at http://127.0.0.1:{port}/ — {mode}; "
            f"ready steps took {time.monotonic() - started:.1f} s. Ctrl-C stops it.\n",
            flush=True,
        )
        with suppress(SystemExit):  # the server's own exit on Ctrl-C
            call_command("runserver", f"127.0.0.1:{port}", use_reloader=False)
    sys.exit(worker.returncode or 0)


def _stop_when_gone(worker: subprocess.Popen, stopping: threading.Event) -> None:
    """A worker that stops on its own takes the web server and beat with it."""
    worker.wait()
    if not stopping.is_set():
        os.kill(os.getpid(), signal.SIGINT)


def _stop(worker: subprocess.Popen, stopping: threading.Event, grace: float = 30) -> None:
    """Celery's warm shutdown: the tasks under way finish (Ctrl-C at a terminal has reached the
    worker already, in the same process group; SIGTERM asks for the same, not a cold stop)."""
    stopping.set()
    if worker.poll() is None:
        worker.terminate()
    try:
        worker.wait(grace)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()


def _start_demo_aws(port: int):
    import importlib.util

    if importlib.util.find_spec("moto") is None:  # the production image leaves it out
        sys.exit(
            "Demo mode needs moto (requirements/demo.txt, which make run installs): give AWS "
            "credentials, or set VIGIL_DEMO=false, to run without it."
        )
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

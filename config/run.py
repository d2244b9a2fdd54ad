"""``make run``: Vigil on one machine with nothing to install.

Migrates, creates the first admin, decides demo mode, and starts the web server, one Celery
worker and Celery beat under honcho (Ctrl-C stops all of them). The embedded defaults are
SQLite and kombu's filesystem broker in ``var/``. In demo mode this process also serves the
embedded AWS stand-in on loopback and discovers the demo account's regions before the first
page is served, and holds open the concerns' demo services (the probes' loopback servers).
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import ExitStack

import django


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    started = time.monotonic()
    django.setup()

    from django.conf import settings
    from django.core.management import call_command
    from honcho.manager import Manager

    from apps.demo.mode import demo_enabled, ensure_demo_account
    from apps.regions import concerns
    from config.celery_app import all_queues

    (settings.VAR_DIR / "static").mkdir(parents=True, exist_ok=True)
    for folder in ("queue", "processed", "control"):
        (settings.VAR_DIR / "broker" / folder).mkdir(parents=True, exist_ok=True)
    call_command("migrate", interactive=False, verbosity=0)
    call_command("ensure_admin")

    env = dict(os.environ)
    demo = demo_enabled()
    env["VIGIL_DEMO"] = "true" if demo else "false"
    ensure_demo_account(demo)
    standin = None
    demo_services = ExitStack()
    if demo:
        standin = _start_demo_aws(settings.VIGIL_DEMO_AWS_PORT)
        env["AWS_ENDPOINT_URL"] = standin.url
        for concern in concerns.registered():
            if concern.demo_runtime is not None:
                demo_services.enter_context(concern.demo_runtime())

    python = sys.executable
    port = settings.VIGIL_WEB_PORT
    queues = ",".join(all_queues(settings.VIGIL_REGION_QUEUES))
    broker_dir = settings.VAR_DIR
    manager = Manager()
    manager.add_process("web", f"{python} manage.py runserver --noreload 127.0.0.1:{port}", env=env)
    manager.add_process(
        "worker",
        f"{python} -m celery -A config worker -l INFO -Q {queues} --concurrency 2 -n vigil@%h",
        env=env,
    )
    manager.add_process(
        "beat",
        f"{python} -m celery -A config beat -l INFO -s {broker_dir / 'celerybeat-schedule'}",
        env=env,
    )
    mode = f"demo mode (AWS stand-in at {standin.url})" if standin else "AWS credentials found"
    print(
        f"\nVigil is starting at http://127.0.0.1:{port}/ — {mode}; "
        f"ready steps took {time.monotonic() - started:.1f} s. Ctrl-C stops it.\n",
        flush=True,
    )
    try:
        manager.loop()
    finally:
        demo_services.close()
        if standin:
            standin.stop()
    sys.exit(manager.returncode)


def _start_demo_aws(port: int):
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

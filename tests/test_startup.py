"""Nothing loads what it does not use: a process's start leaves out what only some work needs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.slow

# Each is loaded by the work that needs it: moto by demo mode and tests, asyncssh by the first
# RAID collection, boto3's clients by the first AWS call, cryptography's X.509 by the first TLS
# probe, drf-spectacular's generator by the URLs (the API's schema decorators need it, and a
# worker loads the URLs for Django's checks).
ON_FIRST_USE = ["moto", "asyncssh", "boto3", "botocore.client", "cryptography.x509"]
WITH_THE_URLS = ["drf_spectacular.openapi"]

SCRIPT = """
import json, sys
import django
django.setup()
loaded = lambda: sorted(m for m in {names} if m in sys.modules)
command = loaded()  # what manage.py loads before its command runs
from config.celery_app import app
app.loader.import_default_modules()  # what a worker loads before its first task
print(json.dumps([command, loaded()]))
"""


def test_it_starts_a_command_or_a_worker_without_the_modules_only_some_work_needs():
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings.base"
    env["VIGIL_DEMO"] = "false"
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(names=ON_FIRST_USE + WITH_THE_URLS)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    command, worker = json.loads(out.stdout.splitlines()[-1])
    assert command == []
    assert worker == WITH_THE_URLS

"""A split deployment, proven: web, beat, one worker per concern queue and one for a per-region
queue (``VIGIL_REGION_QUEUES``), each a process of its own, on PostgreSQL (or SQLite) and a
private Redis. Every collection runs once, on the worker of the queue it was routed to.

The subjects point at closed loopback ports and the AWS stand-in (moto) has no file system:
each collection runs and fails or finds nothing, which is all routing needs to show.
"""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.efs.models import RegionCollection
from apps.galera.models import Cluster, Node
from apps.probes.models import Target
from apps.raid.models import Host
from apps.regions.models import Account, Region
from tests.helpers import ROOT
from tests.services import free_port, wait_for
from tests.services.workers import Beat, RedisServer, Worker, stop_group, worker_env

pytestmark = [pytest.mark.deployment, pytest.mark.django_db(transaction=True)]

NEAR = "eu-west-1"  # has queues of its own: efs.eu-west-1, ...
FAR = "us-east-1"  # on the concern queues
# Queue -> the tasks that must run there, once each.
WORKERS = {
    "default": {"apps.regions.tasks.dispatch"},
    "efs": {"apps.efs.tasks.collect_region"},
    f"efs.{NEAR}": {"apps.efs.tasks.collect_region"},
    "galera": {"apps.galera.tasks.poll_cluster"},
    "raid": {"apps.raid.tasks.collect_host", "apps.raid.tasks.mark_silent"},
    "probes": {"apps.probes.tasks.run_probes"},
}
RAN = re.compile(r"Task (apps\.[\w.]+)\[([0-9a-f-]+)\] succeeded")


def _fleet() -> None:
    closed = free_port()
    account = Account.objects.create(name="Split")
    Account.objects.filter(pk=account.pk).update(next_discovery=timezone.now() + timedelta(days=1))
    near, far = (
        Region.objects.create(account=account, code=code, opt_in_status="opt-in-not-required")
        for code in (NEAR, FAR)
    )
    for region in (near, far):
        RegionCollection.objects.create(region=region)
    cluster = Cluster.objects.create(region=far, name="c1")
    Node.objects.create(cluster=cluster, host="127.0.0.1", port=closed)
    Target.objects.create(region=far, url=f"http://127.0.0.1:{closed}/")
    Host.objects.create(
        region=far, name="h1", collection=Host.Collection.SSH, ssh_address=f"127.0.0.1:{closed}"
    )


def _ran(worker: Worker) -> list[tuple[str, str]]:
    return RAN.findall(worker.log.read_text())


def test_each_collection_runs_once_on_the_worker_its_queue_names(aws, tmp_path):
    _fleet()
    redis = RedisServer(tmp_path)
    redis.start()
    env = worker_env(
        redis.url,
        aws,
        VIGIL_REGION_QUEUES=NEAR,
        VIGIL_OUTBOUND_ALLOW_LOOPBACK="true",
        VIGIL_DISPATCH_SECONDS="3",
        AWS_MAX_ATTEMPTS="1",
    )
    workers = {q: Worker(env, tmp_path / f"worker-{q}.log", queues=q) for q in WORKERS}
    beat = Beat(env, tmp_path)
    web_port = free_port()
    web = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "-w", "1",
         "--bind", f"127.0.0.1:{web_port}", "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    try:
        with ThreadPoolExecutor(len(workers)) as starting:  # they boot side by side
            list(starting.map(Worker.start, workers.values()))
        beat.start()

        def all_ran() -> bool:
            return all(
                tasks <= {name for name, _ in _ran(workers[q])} for q, tasks in WORKERS.items()
            )

        wait_for(all_ran, 60, "every collection on its worker", interval=0.5)
        healthz = f"http://127.0.0.1:{web_port}/healthz"
        assert wait_for(lambda: _answers(healthz), 30, "the web process") == b"ok"
    finally:
        beat.stop()
        for worker in workers.values():
            worker.stop()
        stop_group(web)
        redis.stop()

    for queue, tasks in WORKERS.items():
        ran = _ran(workers[queue])
        # Only its own queue's tasks, and every collection once (dispatch ticks every 3 s, and
        # mark_silent with each tick; a subject is claimed once per interval of its own).
        assert {name for name, _ in ran} == tasks, (queue, ran)
        collections = [name for name, _ in ran if name not in REPEATING]
        assert len(collections) == len(set(collections)), (queue, ran)
    # Each region's collection ran to the end, once: one on efs, one on efs.eu-west-1.
    assert RegionCollection.objects.filter(last_success__isnull=False).count() == 2


REPEATING = {"apps.regions.tasks.dispatch", "apps.raid.tasks.mark_silent"}


def _answers(url: str) -> bytes | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read()
    except OSError:
        return None

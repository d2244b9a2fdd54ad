"""The Celery app: queues per concern, optional per-region queues, one beat tick.

Tasks live in ``apps/<concern>/tasks.py`` and are routed by their module: everything in
``apps.efs.tasks`` goes to the ``efs`` queue, and so on; each concern declares its queue in the
concern registry (``apps/regions/concerns.py``), read here when a task is sent, so a new
concern's tasks never fall into ``default`` unnoticed. A task called with a ``region``
keyword whose code is listed in ``VIGIL_REGION_QUEUES`` goes to ``<concern>.<region>``
instead (``efs.eu-west-1``), so a worker close to that region can take it:
``celery -A config worker -Q efs.eu-west-1``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from celery import Celery

from . import filesystem_broker

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

#: Queues of apps that are not concerns, by tasks module.
OTHER_QUEUES = {"apps.alerts.tasks": "alerts"}
DEFAULT_QUEUE = "default"

# filesystem:// (the embedded broker) with each message written whole before it is read.
filesystem_broker.install()

app = Celery("vigil")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def command(*args: str) -> list[str]:
    """``celery -A config <args>`` with this Python: how a worker or beat of Vigil is started
    (``make run``'s child, the benchmarks)."""
    return [sys.executable, "-m", "celery", "-A", "config", *args]


def task_queues() -> dict[str, str]:
    """``{tasks module: queue}``: every registered concern's, and the alerts'."""
    # config/__init__.py imports this module while settings load, before any app can
    from apps.regions import concerns

    return {**concerns.task_queues(), **OTHER_QUEUES}


def queue_for(task_name: str, region: str | None, region_queues: list[str]) -> str:
    """The queue a task belongs on: its concern's, or that concern's per-region queue."""
    queue = task_queues().get(task_name.rpartition(".")[0])
    if queue is None:
        return DEFAULT_QUEUE
    if region and region in region_queues:
        return f"{queue}.{region}"
    return queue


def route_task(name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **kw: Any):
    from django.conf import settings

    region = (kwargs or {}).get("region")
    return {"queue": queue_for(name, region, settings.VIGIL_REGION_QUEUES)}


app.conf.task_routes = (route_task,)


def all_queues(region_queues: list[str]) -> list[str]:
    """Every queue a single all-in-one worker should consume (``make run``)."""
    named = list(dict.fromkeys(task_queues().values()))
    return [DEFAULT_QUEUE, *named, *(f"{q}.{r}" for r in region_queues for q in named)]

from __future__ import annotations

import importlib

import pytest

from apps.regions import tasks
from apps.regions.models import Account
from tests.helpers import eager_celery

pytestmark = pytest.mark.slow

# config/__init__.py exports the app under the module's name; fetch the module itself.
celery_module = importlib.import_module("config.celery_app")


@pytest.mark.parametrize(
    ("task", "region", "queue"),
    [
        ("apps.efs.tasks.collect", None, "efs"),
        ("apps.efs.tasks.collect", "eu-west-1", "efs.eu-west-1"),
        ("apps.efs.tasks.collect", "us-east-1", "efs"),
        ("apps.galera.tasks.poll", None, "galera"),
        ("apps.alerts.tasks.send_alerts", None, "alerts"),
        ("apps.regions.tasks.dispatch", None, "default"),
        ("celery.backend_cleanup", None, "default"),
    ],
)
def test_it_routes_work_to_the_queue_of_its_concern_and_region(task, region, queue):
    assert celery_module.queue_for(task, region, ["eu-west-1"]) == queue


def test_it_lists_every_queue_for_an_all_in_one_worker():
    queues = celery_module.all_queues(["ap-east-1"])
    assert {"default", "efs", "galera", "raid", "probes", "alerts", "efs.ap-east-1"} <= set(queues)


@pytest.mark.django_db
def test_it_discovers_regions_when_the_beat_tick_runs_eagerly(aws, settings):
    with eager_celery():
        account = Account.objects.create(name="prod")
        tasks.dispatch.delay()
    assert account.regions.filter(code="eu-west-1").exists()

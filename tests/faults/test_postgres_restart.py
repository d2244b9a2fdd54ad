"""PostgreSQL restarted in the middle of a collection cycle: the cycle fails, the next one
reconnects and back-fills, and no minute, transition or email is lost.

The database is a private PostgreSQL cluster (``PrivatePostgres``) so that restarting it
disturbs nobody; the worker and this process both use it for the length of the test.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import environ
import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connections
from django.db.utils import load_backend

from apps.efs.models import FileSystem
from tests.helpers import ROOT
from tests.services import vigil_env, wait_for
from tests.services.faults import PrivatePostgres

from .fleet import (
    assert_no_notification_lost_or_doubled,
    assert_no_transition_lost,
    assert_rows_are_the_truth,
    assert_statuses_are_the_truth,
    collected_end,
    collected_then_unknown,
    deliver_all,
    outage,
    run_cycle,
    start_slow_cycle,
    statuses,
)

pytestmark = pytest.mark.faults


@pytest.fixture
def postgres() -> Iterator[PrivatePostgres]:
    server = PrivatePostgres()
    try:
        server.start()
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
            cwd=ROOT,
            env=vigil_env(DATABASE_URL=server.url),
            check=True,
            timeout=300,
        )
        yield server
    finally:
        server.stop()


@contextmanager
def database(url: str, django_db_blocker) -> Iterator[None]:
    """This process's default connection pointed at ``url`` for the block."""
    (settings_dict,) = connections.configure_settings(
        {"default": environ.Env.db_url_config(url)}
    ).values()
    wrapper = load_backend(settings_dict["ENGINE"]).DatabaseWrapper(settings_dict, "default")
    original = connections["default"]
    ContentType.objects.clear_cache()  # ids differ between databases
    connections["default"] = wrapper
    try:
        with django_db_blocker.unblock():
            yield
    finally:
        wrapper.close()
        connections["default"] = original
        ContentType.objects.clear_cache()


def test_a_postgres_restart_costs_at_most_the_cycle_it_interrupts_and_loses_nothing(
    postgres, django_db_blocker, start_worker, broker, cloudwatch, responder, aws
):
    with database(postgres.url, django_db_blocker):
        # Persistent connections, as a production worker may keep them (CONN_MAX_AGE).
        worker = start_worker(f"{postgres.url}?conn_max_age=600")
        # Collected, then an outage of 20 minutes while CloudWatch refused: all unknown.
        rc, cut = collected_then_unknown(aws, broker, cloudwatch)

        # PostgreSQL restarts while the recovering cycle waits for CloudWatch: its writes
        # fail, and the cycle with them (it changed nothing: statuses are still unknown).
        start_slow_cycle(broker, rc, responder)
        postgres.restart()
        connections["default"].close()  # this process's connection died too
        responder.faults.latency_s = 0.0
        wait_for(
            lambda: "OperationalError" in worker.output(), 30, "the cycle to fail on the restart"
        )
        assert set(statuses().values()) == {"unknown"}
        assert FileSystem.objects.filter(collected_until__gt=cut).count() == 0
        rc.refresh_from_db()
        assert rc.lease_until is None  # given back on a new connection: no wait for it

        # The next cycle reconnects, back-fills the outage from CloudWatch and recovers.
        run_cycle(broker, rc)
        deliver_all(broker)
        assert rc.last_error == ""
        assert_rows_are_the_truth(cut, collected_end())
        assert "unknown" not in statuses().values()

        # A restart while the worker is idle: the next task must not be the one that finds
        # out (Celery's Django fixup closes connections around every task, whatever
        # CONN_MAX_AGE says, so each task connects afresh).
        worker.wait_idle()
        postgres.restart()
        connections["default"].close()
        cut = outage(10)
        failures = worker.output().count("OperationalError")
        run_cycle(broker, rc)
        deliver_all(broker)
        assert worker.output().count("OperationalError") == failures
        assert rc.last_error == ""

        assert_rows_are_the_truth(cut, collected_end())
        assert "unknown" not in statuses().values()
        assert_statuses_are_the_truth(rc)
        assert_no_transition_lost()
        assert_no_notification_lost_or_doubled(aws)

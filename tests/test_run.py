"""``make run`` stops on SIGINT or SIGTERM whatever signal state it inherited, and leaves no
process behind: started as a script starts it (in the background, SIGINT ignored), as a service
manager does (SIGTERM to the main process) and at a terminal (Ctrl-C to the process group,
while a keep-alive probe holds a task of the worker)."""

from __future__ import annotations

import signal

import pytest

from tests.services import wait_for
from tests.services.make_run import MakeRun

pytestmark = pytest.mark.slow


@pytest.fixture
def make_run(tmp_path, migrated_sqlite):
    runs: list[MakeRun] = []

    def start(**options: object) -> MakeRun:
        run = MakeRun(tmp_path / f"var{len(runs)}", database=migrated_sqlite, **options)
        runs.append(run)
        return run.start()

    yield start
    for run in runs:
        run.kill()


def test_it_stops_on_sigint_sent_to_a_script_s_background_job(make_run):
    run = make_run(demo=False, sigint_ignored=True)
    wait_for(lambda: len(run.processes()) == 2, 60, "the worker to start")

    run.signal(signal.SIGINT)

    assert run.wait_stopped() == 0
    assert "Vigil stopped (SIGINT)." in run.output()


def test_it_stops_on_sigterm_as_a_service_manager_sends_it(make_run):
    run = make_run(demo=False)
    wait_for(lambda: len(run.processes()) == 2, 60, "the worker to start")

    run.signal(signal.SIGTERM)

    assert run.wait_stopped() == 0
    assert "Vigil stopped (SIGTERM)." in run.output()


def test_it_stops_on_ctrl_c_at_a_terminal_while_a_probe_holds_the_worker(make_run):
    run = make_run(demo=True)
    # The demo's "backend pool" keeps its idle connection 65 s: its probe batch is under way.
    wait_for(lambda: "apps.probes.tasks.run_probes" in run.output(), 120, "a probe batch to start")

    run.signal(signal.SIGINT, group=True)

    # 0, so that make prints no "make: *** [Makefile:17: run] Error" after a Ctrl-C.
    assert run.wait_stopped() == 0
    assert "Vigil stopped (SIGINT)." in run.output()

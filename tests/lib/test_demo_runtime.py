"""The demo's repeating work (a concern's ``demo_runtime``): it runs in a thread while held
open, and a failing round does not stop the next."""

from __future__ import annotations

import threading

from apps.lib import demo_runtime as runtime


def test_a_failing_round_is_logged_and_the_next_one_runs(caplog):
    rounds: list[int] = []
    second = threading.Event()

    def work() -> None:
        rounds.append(len(rounds))
        if len(rounds) == 1:
            raise RuntimeError("the first round fails")
        second.set()

    with runtime.repeating("demo-test", 0.01, work):
        assert second.wait(60)
    assert len(rounds) >= 2
    assert "Demo work demo-test failed" in caplog.text

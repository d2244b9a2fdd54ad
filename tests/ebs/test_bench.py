"""bench/ebs_collect.py at a tiny size: it runs, and its cycles stay at the call floor."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def test_the_benchmark_runs_five_volumes_at_the_call_floor():
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "ebs_collect.py"), "--volumes", "5", "--json"],
        capture_output=True, text=True, timeout=300, env=env, check=True,
    )  # fmt: skip
    figures = json.loads(done.stdout[done.stdout.index("{") :])
    assert figures["volumes"] == 6  # and the instance's root volume
    for cycle in figures["cycles"]:
        assert cycle["calls"] == cycle["standin_calls"] == cycle["floor"] == 1
        assert cycle["rows"] > 0 and cycle["statuses"]["unknown"] == 0

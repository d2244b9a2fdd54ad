"""The README's push agent (sh, awk, jq, curl) against a live Vigil with a real token."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from apps.raid.demo import seed_layout_mdstat
from apps.raid.models import Array
from tests.conftest import ROOT, SHARED_FIXTURES

pytestmark = pytest.mark.django_db(transaction=True)

FAKE_MDADM = """#!/bin/sh
# mdadm --detail /dev/NAME from the test's folder; fails like mdadm for unknown arrays
f="{folder}/detail-${{2#/dev/}}"
[ -f "$f" ] && exec cat "$f"
echo "mdadm: cannot open $2: No such file or directory" >&2; exit 1
"""


def readme_agent() -> str:
    readme = (ROOT / "README.md").read_text()
    match = re.search(r"```sh\n(#!/bin/sh\n# vigil-raid-push:.*?)```", readme, re.DOTALL)
    assert match, "the push agent is in README.md"
    return match.group(1)


def test_the_readme_agent_is_ten_lines_or_so():
    lines = [line for line in readme_agent().splitlines() if line.strip()]
    assert len(lines) <= 13


def test_the_readme_agent_pushes_mdstat_and_details(live_server, host, tmp_path: Path):
    agent = tmp_path / "vigil-raid-push"
    agent.write_text(readme_agent())
    agent.chmod(0o755)
    mdstat = tmp_path / "mdstat"
    mdstat.write_text((SHARED_FIXTURES / "mdstat" / "einverne-raid1-4disk-bitmap.txt").read_text())
    detail = (SHARED_FIXTURES / "mdadm-detail" / "einverne-raid1-clean-bitmap.txt").read_text()
    (tmp_path / "detail-md2").write_text(detail)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mdadm").write_text(FAKE_MDADM.format(folder=tmp_path))
    (bin_dir / "mdadm").chmod(0o755)
    token_file = tmp_path / "token"
    token_file.write_text(host.issue_token())
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "VIGIL": live_server.url,
        "NAME": host.name,
        "MDSTAT": str(mdstat),
        "TOKEN_FILE": str(token_file),
    }
    subprocess.run([str(agent)], env=env, check=True, timeout=60)
    md2 = Array.objects.get(host=host, name="md2")
    assert md2.status == "ok"
    assert md2.members.exclude(slot=None).exists()  # the detail came along
    host.refresh_from_db()
    assert host.details_text == {"md2": detail}

    mdstat.write_text(seed_layout_mdstat(failed=["sdb"]))  # no details for these: skipped
    subprocess.run([str(agent)], env=env, check=True, timeout=60)
    assert Array.objects.get(host=host, name="md1").status == "critical"

    mdstat.write_text("garbage\n")
    failed = subprocess.run([str(agent)], env=env, capture_output=True, text=True, timeout=60)
    assert failed.returncode != 0
    assert "400" in failed.stderr

"""The shipped push agent, agents/vigil-raid-push itself, against a live Vigil with a real token:
a fake /proc/mdstat (VIGIL_MDSTAT) and a stub ``mdadm`` on PATH printing real samples."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from apps.raid.demo import seed_layout_mdstat
from apps.raid.models import Array
from tests.conftest import ROOT, SHARED_FIXTURES

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = ROOT / "agents" / "vigil-raid-push"
FAKE_MDADM = """#!/bin/sh
# mdadm --detail /dev/NAME from the test's folder; fails like mdadm for unknown arrays
f="{folder}/detail-${{2#/dev/}}"
[ -f "$f" ] && exec cat "$f"
echo "mdadm: cannot open $2: No such file or directory" >&2; exit 1
"""


@pytest.fixture
def agent_env(tmp_path: Path, live_server, host) -> dict[str, str]:
    """The agent's settings file and a PATH whose ``mdadm`` is the stub."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mdadm").write_text(FAKE_MDADM.format(folder=tmp_path))
    (bin_dir / "mdadm").chmod(0o755)
    config = tmp_path / "vigil-raid-push"
    config.write_text(
        f"VIGIL_URL={live_server.url}/\nVIGIL_TOKEN={host.issue_token()}\nVIGIL_HOST={host.pk}\n"
    )
    config.chmod(0o600)
    return {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "VIGIL_CONFIG": str(config),
        "VIGIL_MDSTAT": str(tmp_path / "mdstat"),
    }


def run(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(AGENT)], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_the_shipped_agent_pushes_mdstat_and_each_arrays_detail(
    agent_env, host, tmp_path, client, django_user_model
):
    mdstat = Path(agent_env["VIGIL_MDSTAT"])
    mdstat.write_text((SHARED_FIXTURES / "mdstat" / "einverne-raid1-4disk-bitmap.txt").read_text())
    detail = (SHARED_FIXTURES / "mdadm-detail" / "einverne-raid1-clean-bitmap.txt").read_text()
    # What JSON must escape, which the agent does with awk alone: quotes, backslashes, tabs.
    detail = detail.replace("Name : md2", 'Name : md2 "quoted" \\back\tslash')
    (tmp_path / "detail-md2").write_text(detail)

    done = run(agent_env)
    assert done.returncode == 0, done.stderr
    md2 = Array.objects.get(host=host, name="md2")
    assert md2.status == "ok"
    assert md2.members.exclude(slot=None).exists()  # the detail came along
    host.refresh_from_db()
    assert host.details_text == {"md2": detail}  # every byte of it

    mdstat.write_text(seed_layout_mdstat(failed=["sdb"]))  # no details for these: skipped
    assert run(agent_env).returncode == 0
    assert Array.objects.get(host=host, name="md1").status == "critical"
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.com"))
    page = client.get(f"/raid/hosts/{host.pk}/").content.decode()
    assert "md1" in page and "critical" in page
    assert "Push agent" in page


def test_the_shipped_agent_fails_loudly_on_a_refused_report(agent_env, host):
    Path(agent_env["VIGIL_MDSTAT"]).write_text("garbage\n")
    failed = run(agent_env)
    assert failed.returncode != 0
    assert "400" in failed.stderr
    assert "vgh_" not in failed.stderr  # the token never reaches the output


def test_the_shipped_agent_says_what_is_missing(tmp_path):
    env = {"PATH": os.environ["PATH"], "VIGIL_CONFIG": str(tmp_path / "none")}
    failed = subprocess.run([str(AGENT)], env=env, capture_output=True, text=True, timeout=30)
    assert failed.returncode == 1
    assert "VIGIL_URL is not set" in failed.stderr


def test_the_shipped_agent_sends_each_arrays_array_state_and_sync_action(agent_env, host, tmp_path):
    """A repair in progress: /proc/mdstat prints it as a resync, sysfs says repair."""
    repair = SHARED_FIXTURES / "mdstat" / "kernel-raid1-repair-printed-as-resync.txt"
    Path(agent_env["VIGIL_MDSTAT"]).write_text(repair.read_text())
    md = tmp_path / "sys" / "block" / "md1" / "md"
    md.mkdir(parents=True)
    (md / "array_state").write_text("active\n")
    (md / "sync_action").write_text("repair\n")
    (md / "degraded").write_text("0\n")  # not asked for
    host.domain_rules = {}
    host.save()

    done = run({**agent_env, "VIGIL_SYSFS": str(tmp_path / "sys")})
    assert done.returncode == 0, done.stderr
    md1 = Array.objects.get(host=host, name="md1")
    assert (md1.status, md1.sync_action, md1.array_state) == ("ok", "repair", "active")
    assert "repair 12.6% done" in md1.reason

    (md / "sync_action").unlink()  # an older kernel or a RAID-0: no such file
    (md / "array_state").write_text("broken\n")
    assert run({**agent_env, "VIGIL_SYSFS": str(tmp_path / "sys")}).returncode == 0
    md1.refresh_from_db()
    assert (md1.status, md1.state, md1.array_state) == ("critical", "broken", "broken")

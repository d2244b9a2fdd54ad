"""The push agents in agents/, as shipped: POSIX sh that shellcheck passes, units that systemd
accepts, a cron line per agent, and an ``install`` that puts them in place (under a scratch
root here). What they push is tested with Vigil running: tests/raid/test_agent.py and
tests/galera/test_push.py and tests/efs/test_agent.py."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from apps.lib import agents
from tests.helpers import ROOT

AGENTS = ROOT / "agents"
NAMES = ("vigil-raid-push", "vigil-galera-push", "vigil-nfs-push")


def test_every_agent_has_its_script_units_and_cron_line_and_nothing_else():
    shipped = sorted(path.name for path in AGENTS.iterdir())
    assert shipped == sorted(name for agent in NAMES for name in agents.files(agent))
    for agent in NAMES:
        assert os.access(AGENTS / agent, os.X_OK)
        assert (AGENTS / agent).read_text().startswith("#!/bin/sh\n")


@pytest.mark.parametrize("agent", NAMES)
def test_the_scripts_are_posix_sh_that_shellcheck_passes(agent):
    assert shutil.which("shellcheck"), "shellcheck is in requirements/apt.txt"
    done = subprocess.run(
        ["shellcheck", "--shell=sh", "--severity=style", str(AGENTS / agent)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout
    assert "jq" not in (AGENTS / agent).read_text()


@pytest.mark.parametrize("agent", NAMES)
def test_systemd_accepts_the_service_and_the_timer(agent, tmp_path: Path):
    if not shutil.which("systemd-analyze"):
        pytest.skip("systemd-analyze is not installed (the systemd package)")
    for suffix in (".service", ".timer"):
        text = (AGENTS / f"{agent}{suffix}").read_text()
        # ExecStart must exist for verify: the script where it is, not where install puts it.
        text = text.replace(f"/usr/local/sbin/{agent}", str(AGENTS / agent))
        (tmp_path / f"{agent}{suffix}").write_text(text)
    done = subprocess.run(
        ["systemd-analyze", "verify", f"{agent}.service", f"{agent}.timer"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    ours = [line for line in done.stderr.splitlines() if agent in line]
    assert ours == []


@pytest.mark.parametrize("agent", NAMES)
def test_the_cron_line_runs_the_installed_script_every_minute(agent):
    line = (AGENTS / f"{agent}.cron").read_text()
    user = "vigil" if agent == "vigil-galera-push" else "root"
    assert line == f"* * * * * {user} /usr/local/sbin/{agent}\n"


#: What each agent's ``install`` is given, and the extra lines its settings file gets.
INSTALL = {
    "vigil-raid-push": ({"VIGIL_TOKEN": "vgh_0123abcdsecret", "VIGIL_HOST": "12"}, ""),
    "vigil-galera-push": (
        {"VIGIL_TOKEN": "vgn_0123abcdsecret", "VIGIL_NODE": "12"},
        "VIGIL_MYSQL_OPTIONS=\n",
    ),
    "vigil-nfs-push": ({"VIGIL_TOKEN": "vgc_0123abcdsecret"}, ""),
}


@pytest.mark.parametrize("agent", NAMES)
@pytest.mark.parametrize("systemd", [True, False], ids=["systemd", "cron"])
def test_install_puts_the_script_settings_and_timer_or_cron_line_in_place(tmp_path, agent, systemd):
    root = tmp_path / "root"
    if systemd:
        (root / "run/systemd/system").mkdir(parents=True)
    given, extra = INSTALL[agent]
    settings = {"VIGIL_URL": "https://vigil.example.com", **given}
    env = {"PATH": os.environ["PATH"], "VIGIL_INSTALL_ROOT": str(root), **settings}
    done = subprocess.run(
        ["sh", str(AGENTS / agent), "install"], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert (root / "usr/local/sbin" / agent).read_bytes() == (AGENTS / agent).read_bytes()
    config = root / "etc/default" / agent
    assert config.stat().st_mode & 0o777 == 0o600
    assert config.read_text() == "".join(f"{k}={v}\n" for k, v in settings.items()) + extra
    units = root / "etc/systemd/system"
    if systemd:
        for unit in (f"{agent}.service", f"{agent}.timer"):
            assert (units / unit).read_text() == (AGENTS / unit).read_text()
        assert not (root / "etc/cron.d").exists()
    else:
        cron = (root / "etc/cron.d" / agent).read_text()
        assert cron == (AGENTS / f"{agent}.cron").read_text()
        assert not units.exists()


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ({}, "VIGIL_NODE is not set"),
        (
            {"VIGIL_NODE": "1", "VIGIL_MYSQL_OPTIONS": "--socket={tmp}/no.sock --user=vigil"},
            "could not read the node's status",
        ),
    ],
    ids=["no node", "the node does not answer"],
)
def test_the_galera_agent_says_why_it_pushes_nothing(tmp_path, given, says):
    env = {
        "PATH": os.environ["PATH"],
        "VIGIL_CONFIG": str(tmp_path / "none"),
        "VIGIL_URL": "http://127.0.0.1:9",
        "VIGIL_TOKEN": "vgn_x",
        **{name: value.format(tmp=tmp_path) for name, value in given.items()},
    }
    done = subprocess.run(
        [str(AGENTS / "vigil-galera-push")], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert says in done.stderr

"""The shipped push agent, agents/vigil-raid-push itself, against a live Vigil with a real token:
a fake /proc/mdstat (VIGIL_MDSTAT) and a stub ``mdadm`` on PATH printing real samples."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from apps.raid.demo import seed_layout_mdstat
from apps.raid.models import Array, Disk
from tests.helpers import ROOT, SHARED_FIXTURES

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = ROOT / "agents" / "vigil-raid-push"
FAKE_MDADM = """#!/bin/sh
# mdadm --detail /dev/NAME from the test's folder; fails like mdadm for unknown arrays
f="{folder}/detail-${{2#/dev/}}"
[ -f "$f" ] && exec cat "$f"
echo "mdadm: cannot open $2: No such file or directory" >&2; exit 1
"""
#: A smartctl stand-in: prints the test's copy of a published output for the disk it is asked
#: about, with smartctl's exit status bits; no file: "No such device", exit 2 (bit 1).
FAKE_SMARTCTL = """#!/bin/sh
[ "$1 $2" = "--json=c -a" ] || {{ echo "unexpected arguments: $*" >&2; exit 1; }}
f="{folder}/smart-${{3#/dev/}}"
[ -f "$f" ] && {{ cat "$f"; exit 4; }}
printf '{{"json_format_version":[1,0],"smartctl":{{"exit_status":2,"messages":[{{"string":"%s: No such device","severity":"error"}}]}}}}' "$3"
exit 2
"""


@pytest.fixture
def agent_env(tmp_path: Path, live_server, host) -> dict[str, str]:
    """The agent's settings file and a PATH whose ``mdadm`` is the stub."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mdadm").write_text(FAKE_MDADM.format(folder=tmp_path))
    (bin_dir / "mdadm").chmod(0o755)
    (bin_dir / "smartctl").write_text(FAKE_SMARTCTL.format(folder=tmp_path))
    (bin_dir / "smartctl").chmod(0o755)
    config = tmp_path / "vigil-raid-push"
    config.write_text(
        f"VIGIL_URL={live_server.url}/\nVIGIL_TOKEN={host.issue_token()}\nVIGIL_HOST={host.pk}\n"
    )
    config.chmod(0o600)
    return {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "VIGIL_CONFIG": str(config),
        "VIGIL_MDSTAT": str(tmp_path / "mdstat"),
        "VIGIL_DEV": str(tmp_path / "dev"),
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


def test_the_shipped_agent_sends_each_disks_smart_its_names_and_the_checks(
    agent_env, host, tmp_path, client, django_user_model
):
    """smartctl on PATH prints published outputs: a failing disk in md3, a USB bridge that
    hides SMART in md1; the agent's own links folder (VIGIL_DEV) holds by-id and by-path."""
    smart = SHARED_FIXTURES / "smartctl"
    Path(agent_env["VIGIL_MDSTAT"]).write_text(seed_layout_mdstat())
    for disk in "bcdefghijklmnop":
        (tmp_path / f"smart-sd{disk}").write_text(
            (smart / "scrutiny-sata-wdc-healthy.json").read_text()
        )
    (tmp_path / "smart-sdd").write_text((smart / "scrutiny-usb-jmicron-failing.json").read_text())
    (tmp_path / "smart-sdl").write_text(
        (smart / "smartmontools-go-usb-bridge-unknown.json").read_text()
    )
    (tmp_path / "smart-sdm").unlink()  # smartctl: no such device
    by_id = tmp_path / "dev" / "disk" / "by-id"
    by_path = tmp_path / "dev" / "disk" / "by-path"
    by_id.mkdir(parents=True)
    by_path.mkdir()
    (by_id / "wwn-0x5000cca37fca81a8").symlink_to("../../sdd")
    portal = "ip-192.0.2.11:3260-iscsi-iqn.2026-01.example.storage-a:disks-lun-2"
    (by_path / portal).symlink_to("../../sdd")
    md = tmp_path / "sys" / "block" / "md1" / "md"
    md.mkdir(parents=True)
    for name, value in [("array_state", "clean"), ("sync_action", "idle")]:
        (md / name).write_text(f"{value}\n")
    (md / "last_sync_action").write_text("check\n")
    (md / "mismatch_cnt").write_text("256\n")

    done = run({**agent_env, "VIGIL_SYSFS": str(tmp_path / "sys")})
    assert done.returncode == 0, done.stderr
    sdd = Disk.objects.get(host=host, device="sdd")
    assert (sdd.serial, sdd.smart_passed, sdd.pending_sectors, sdd.failing) == (
        "MSK423Y20S3HBC",
        False,
        8,
        True,
    )
    assert sdd.by_id == ["wwn-0x5000cca37fca81a8"] and sdd.iscsi_lun == 2
    sdl = Disk.objects.get(host=host, device="sdl")
    assert sdl.status == "unknown" and "Unknown USB bridge" in sdl.summary
    sdm = Disk.objects.get(host=host, device="sdm")
    assert sdm.status == "unknown" and "No such device" in sdm.summary
    md3 = Array.objects.get(host=host, name="md3")
    assert md3.status == "warning" and "sdd (serial MSK423Y20S3HBC) is failing SMART" in md3.reason
    md1 = Array.objects.get(host=host, name="md1")
    assert (md1.mismatch_cnt, md1.last_sync_action) == (256, "check")
    assert "the last check found 256 sectors out of step" in md1.reason
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.com"))
    page = client.get(f"/raid/hosts/{host.pk}/").content.decode()
    assert "mdadm --manage /dev/md3 --fail /dev/disk/by-id/wwn-0x5000cca37fca81a8" in page

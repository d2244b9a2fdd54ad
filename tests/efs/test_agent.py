"""agents/vigil-nfs-push as shipped, against a live Vigil with a fleet's key: a mountstats file
named by its setting (VIGIL_MOUNTSTATS: the machines the tests run on have no NFS client), the
instance id from a DMI asset tag of the test's own (VIGIL_DMI), and the system resolver reading
an /etc/hosts and /etc/resolv.conf of the test's own (a private mount namespace: nothing of the
machine's is changed, no outside DNS server is asked)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from django.urls import reverse

from apps.efs.models import ClientKey, FileSystem, NfsClient, NfsMount, NfsSample
from tests.efs.builders import mountstats
from tests.helpers import ROOT
from tests.services.slow_dns import slow_reverse_dns

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = ROOT / "agents" / "vigil-nfs-push"
EFS_NAME = "fs-0123abcd.efs.us-east-1.amazonaws.com"


def private_resolver_command(tmp: Path, hosts: str, nameserver: str) -> list[str]:
    """A command prefix that runs what follows with its own /etc/hosts and /etc/resolv.conf
    (bind mounts in a new mount namespace; the network is the machine's, so Vigil is reached)."""
    (tmp / "hosts").write_text(hosts)
    (tmp / "resolv.conf").write_text(f"nameserver {nameserver}\noptions timeout:5 attempts:1\n")
    script = (
        f"mount --bind {tmp / 'hosts'} /etc/hosts && "
        f"mount --bind {tmp / 'resolv.conf'} /etc/resolv.conf && "
        'exec "$@"'
    )
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "agent"]


@pytest.fixture
def agent(tmp_path: Path, live_server):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare for a private /etc/hosts")
    dmi = tmp_path / "dmi"
    dmi.mkdir()
    (dmi / "board_asset_tag").write_text("i-0fedcba9876543210\n")
    key = ClientKey.objects.create(name="web").issue_token()
    config = tmp_path / "vigil-nfs-push"
    config.write_text(f"VIGIL_URL={live_server.url}/\nVIGIL_TOKEN={key}\n")
    config.chmod(0o600)
    env = {
        "PATH": os.environ["PATH"],
        "VIGIL_CONFIG": str(config),
        "VIGIL_MOUNTSTATS": str(tmp_path / "mountstats"),
        "VIGIL_DMI": str(dmi),
        "VIGIL_IMDS": "none",
        "VIGIL_HOSTNAME": "web-7",
    }

    def run(
        text: str,
        *args: str,
        extra: dict | None = None,
        hosts: str = f"10.1.2.3 {EFS_NAME}\n",
        nameserver: str = "127.0.0.9",  # nothing answers there: other names fail at once
    ) -> subprocess.CompletedProcess:
        prefix = private_resolver_command(tmp_path, hosts, nameserver)
        (tmp_path / "mountstats").write_text(text)
        return subprocess.run(
            [*prefix, str(AGENT), *args],
            env={**env, **(extra or {})},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    return run


def test_the_shipped_agent_pushes_two_minutes_of_a_clients_efs_mount(agent, site):
    fs = FileSystem.objects.create(region=site, filesystem_id="fs-0123abcd")
    machine = Path("/proc/self/mountstats").read_text()
    text = "device sysfs mounted on /sys with fstype sysfs\n" + mountstats(
        EFS_NAME, read_bytes=1000, reads=10
    )
    first = agent(text)
    assert first.returncode == 0, first.stderr
    second = agent(
        text.replace("bytes:  0 0 0 0 1000 0", "bytes:  0 0 0 0 9000 0").replace(
            "READ: 10 10 ", "READ: 18 18 "
        )
    )
    assert second.returncode == 0, second.stderr
    client = NfsClient.objects.get()
    assert (client.identity, client.hostname) == ("i-0fedcba9876543210", "web-7")
    mount = NfsMount.objects.get()
    assert mount.filesystem == fs and mount.mountpoint == "/mnt/efs"
    sample = NfsSample.objects.get()
    assert (sample.read_bytes, sample.read_ops, sample.filesystem_id) == (8000, 8, fs.pk)
    (lookup,) = client.lookups
    assert lookup["server"] == EFS_NAME and lookup["address"] == "10.1.2.3"
    assert lookup["forward_ok"] is True and lookup["forward_seconds"] is not None
    assert Path("/proc/self/mountstats").read_text() == machine  # the machine's own untouched


def test_a_mount_through_efs_utils_tls_tunnel_is_tied_by_its_state_file(agent, site, tmp_path):
    """A real state file as a user published it (tests/fixtures/efs-utils/): the NFS mount is of
    127.0.0.1 on the tunnel's port; the file's name and JSON say which file system it is."""
    state = tmp_path / "efs"
    state.mkdir()
    (sample,) = (ROOT / "tests" / "fixtures" / "efs-utils").glob("fs-*")
    shutil.copy(sample, state / sample.name)
    (state / f"stunnel-config.{sample.name}").write_text("[efs]\naccept = 127.0.0.1:20155\n")
    (state / "fs-bad.not-a-port").write_text("{}")
    fs = FileSystem.objects.create(region=site, filesystem_id="fs-00e74d7abdcb5d159")
    where = "/var/lib/kubelet/pods/1ea49582-822f-41d4-965f-14f27b31badc/volumes/kubernetes.io~csi/airflow-dags/mount"
    text = mountstats("127.0.0.1", mountpoint=where, reads=5).replace(
        "proto=tcp,", "proto=tcp,port=20155,"
    )
    extra = {"VIGIL_EFS_STATE_DIR": str(state)}
    printed = agent(text, "print", extra=extra)
    assert '"tunnels": [{"filesystem_id": "fs-00e74d7abdcb5d159", "port": 20155, ' in printed.stdout
    assert '"lookups": []' in printed.stdout  # the loopback is not looked up
    assert agent(text, extra=extra).returncode == 0
    mount = NfsMount.objects.get()
    assert (mount.filesystem, mount.attributed_by, mount.server) == (
        fs,
        "efs-utils tunnel",
        "127.0.0.1",
    )


def test_print_writes_the_report_and_sends_nothing(agent):
    done = agent(mountstats(EFS_NAME), "print")
    assert done.returncode == 0, done.stderr
    assert '"hostname": "web-7"' in done.stdout and EFS_NAME in done.stdout
    assert not NfsClient.objects.exists()


def test_the_agent_says_why_it_pushes_nothing(agent, tmp_path):
    done = agent("", extra={"VIGIL_MOUNTSTATS": str(tmp_path / "none")})
    assert done.returncode == 1 and "cannot read" in done.stderr


def test_a_slow_reverse_lookup_of_the_efs_server_warns_as_the_outage_happened(
    agent, site, tmp_path, logged_in_client
):
    """dnsmasq answers the EFS name and its PTR; the proxy in front holds PTR answers 2 s, the
    agent's resolver (getent, NSS: what statd uses) goes through it; the page warns over 1 s."""
    fs = FileSystem.objects.create(region=site, filesystem_id="fs-0123abcd")
    with slow_reverse_dns({EFS_NAME: "10.1.2.3"}, 2.0, tmp_path) as dns:
        done = agent(mountstats(EFS_NAME), hosts="127.0.0.1 localhost\n", nameserver=dns.address)
    assert done.returncode == 0, done.stderr
    assert dns.ptr_queries >= 1
    (lookup,) = NfsClient.objects.get().lookups
    assert lookup["address"] == "10.1.2.3" and lookup["forward_ok"] is True
    assert lookup["reverse_name"] == EFS_NAME
    assert lookup["reverse_seconds"] >= 2.0  # a lower bound: the proxy held the answer 2 s
    html = logged_in_client.get(reverse("efs:filesystem_detail", args=[fs.pk])).content.decode()
    assert f"Looking up {EFS_NAME}\n      (10.1.2.3) takes" in html
    assert "s (reverse)" in html and "file locking hangs" in html


def test_a_lock_that_does_not_come_warns(agent, site, tmp_path, logged_in_client):
    """The opt-in shared flock on a file of the mount, against an exclusive lock the test holds."""
    fs = FileSystem.objects.create(region=site, filesystem_id="fs-0123abcd")
    mountpoint = tmp_path / "efs"
    mountpoint.mkdir()
    with (mountpoint / ".vigil-nfs-lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        done = agent(
            mountstats(EFS_NAME, mountpoint=str(mountpoint)), extra={"VIGIL_LOCK_SECONDS": "1"}
        )
    assert done.returncode == 0, done.stderr
    (lock,) = NfsClient.objects.get().locks
    assert lock == {"mountpoint": str(mountpoint), "seconds": lock["seconds"], "ok": False}
    html = logged_in_client.get(reverse("efs:filesystem_detail", args=[fs.pk])).content.decode()
    assert f"a shared lock on {mountpoint} did not come" in html

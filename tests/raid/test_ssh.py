"""SSH collection against a real OpenSSH server: end to end, wrong host key, timeouts."""

from __future__ import annotations

import pytest
from django.utils.html import escape

from apps.alerts.models import Transition
from apps.raid import ssh
from apps.raid.collect import ssh_target
from apps.raid.demo import seed_devlinks, seed_layout_mdstat
from apps.raid.models import Array, Disk, Host
from apps.raid.tasks import collect_host
from tests.helpers import SHARED_FIXTURES

pytestmark = pytest.mark.django_db


def statuses(host: Host) -> dict[str, str]:
    return dict(Array.objects.filter(host=host).values_list("name", "status"))


def ed25519_key():
    """A fresh ed25519 key. asyncssh loads here, with the tests that use it (every test of this
    module needs the sshd service), not while ``make check`` collects the module."""
    import asyncssh

    return asyncssh.generate_private_key("ssh-ed25519")


def test_it_reads_mdstat_and_each_arrays_detail_over_ssh(ssh_host, sshd):
    text = (SHARED_FIXTURES / "mdstat" / "einverne-raid1-4disk-bitmap.txt").read_text()
    detail = (SHARED_FIXTURES / "mdadm-detail" / "einverne-raid1-clean-bitmap.txt").read_text()
    smart = (SHARED_FIXTURES / "smartctl" / "scrutiny-sata-wdc-healthy.json").read_text()
    disks = ssh.leaf_disks(text)
    sshd.reply(text, {"md2": detail}, smart=dict.fromkeys(disks, smart))
    collected = ssh.collect(ssh_target(ssh_host))
    assert collected.mdstat == text
    assert collected.details == {"md2": detail}
    assert collected.smart == dict.fromkeys(disks, smart)
    assert collected.warnings == ()


def test_a_host_without_smartmontools_is_one_warning_and_its_arrays_are_judged(ssh_host, sshd):
    text = (SHARED_FIXTURES / "mdstat" / "einverne-raid1-4disk-bitmap.txt").read_text()
    sshd.reply(text)
    collected = ssh.collect(ssh_target(ssh_host))
    smartctl = [w for w in collected.warnings if w.startswith("smartctl on ")]
    assert smartctl == [
        f"smartctl on {', '.join(ssh.leaf_disks(text))}: printed nothing (the sudo rule? "
        "smartmontools 7 or later?)"
    ]
    assert collected.smart == {}


def test_collection_goes_end_to_end_into_statuses_and_transitions(ssh_host, sshd):
    sshd.reply(seed_layout_mdstat())
    collect_host(ssh_host.pk)
    assert set(statuses(ssh_host).values()) == {"ok"}
    ssh_host.refresh_from_db()
    # no detail files: mdadm --detail fails for each array, which is kept as a warning
    assert "mdadm --detail /dev/md99" in ssh_host.last_error
    assert ssh_host.last_report is not None

    sshd.reply(seed_layout_mdstat(failed=["sdg"]))
    collect_host(ssh_host.pk)
    after = statuses(ssh_host)
    assert after["md1"] == "critical"
    assert after["md99"] == "warning"
    md1 = Transition.objects.filter(subject_label="storage-client:md1").first()
    assert (md1.old_status, md1.new_status) == ("ok", "critical")
    assert "failed member sdg" in md1.reason
    md99 = Array.objects.get(host=ssh_host, name="md99")
    assert "any 1 of the 3 storage servers" in md99.domain_headroom_text


def test_a_wrong_host_key_is_refused_shown_and_changes_nothing(ssh_host, sshd):
    sshd.reply(seed_layout_mdstat())
    collect_host(ssh_host.pk)
    before = statuses(ssh_host)
    impostor = ed25519_key().export_public_key().decode()
    ssh_host.known_hosts = f"[127.0.0.1]:{sshd.port} {impostor}"
    ssh_host.save()
    sshd.reply(seed_layout_mdstat(failed=["sdb", "sdc"]))
    collect_host(ssh_host.pk)
    ssh_host.refresh_from_db()
    assert "host key not trusted" in ssh_host.last_error
    assert statuses(ssh_host) == before


def test_a_bare_key_without_a_host_pattern_is_accepted_for_this_host(ssh_host, sshd):
    sshd.reply(seed_layout_mdstat())
    ssh_host.known_hosts = sshd.known_hosts_line.split(" ", 1)[1]
    collected = ssh.collect(ssh_target(ssh_host))
    assert collected.mdstat.startswith("Personalities")


def test_an_empty_known_hosts_file_trusts_nobody(ssh_host, sshd, settings, tmp_path):
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    settings.VIGIL_RAID_SSH_KNOWN_HOSTS = str(empty)
    ssh_host.known_hosts = ""
    with pytest.raises(ssh.SshError, match="host key not trusted"):
        ssh.collect(ssh_target(ssh_host))


def test_a_server_that_never_answers_times_out(ssh_host, settings):
    # the SSH test harness loads with the tests that use it, not in make check's collection
    from tests.services.sshd import SilentServer

    silent = SilentServer()
    try:
        settings.VIGIL_RAID_SSH_CONNECT_TIMEOUT = 0.5
        ssh_host.ssh_port = silent.port
        ssh_host.save()
        collect_host(ssh_host.pk)
    finally:
        silent.close()
    ssh_host.refresh_from_db()
    assert "no answer within 0.5 s" in ssh_host.last_error
    assert ssh_host.last_report is None
    assert not Array.objects.filter(host=ssh_host).exists()


def test_a_command_that_hangs_times_out(ssh_host, sshd, settings):
    settings.VIGIL_RAID_SSH_COMMAND_TIMEOUT = 0.5
    sshd.reply(seed_layout_mdstat(), delay=5)
    collect_host(ssh_host.pk)
    ssh_host.refresh_from_db()
    assert "'cat /proc/mdstat' did not finish within 0.5 s" in ssh_host.last_error
    assert not Array.objects.filter(host=ssh_host).exists()


def test_unreadable_output_is_the_hosts_error_and_stores_nothing(ssh_host, sshd):
    sshd.reply("this is not mdstat\n")
    collect_host(ssh_host.pk)
    ssh_host.refresh_from_db()
    assert ssh_host.last_error.startswith("unreadable output: /proc/mdstat, line 1")
    assert not Array.objects.filter(host=ssh_host).exists()


def test_a_refused_login_says_so(ssh_host, settings):
    settings.VIGIL_RAID_SSH_KEY = ed25519_key().export_private_key().decode()
    with pytest.raises(ssh.SshError, match="login refused"):
        ssh.collect(ssh_target(ssh_host))


def test_a_host_being_collected_is_not_collected_again(ssh_host, sshd):
    from apps.lib import leases
    from apps.raid.models import SSH_LEASE

    sshd.reply(seed_layout_mdstat())
    assert leases.acquire(Host, ssh_host.pk, SSH_LEASE)
    collect_host(ssh_host.pk)
    assert not Array.objects.filter(host=ssh_host).exists()


def test_the_whole_collection_has_a_time_budget(ssh_host, sshd):
    from dataclasses import replace

    sshd.reply(seed_layout_mdstat(), delay=5)
    target = replace(ssh_target(ssh_host), command_timeout=30, total_timeout=0.5)
    with pytest.raises(ssh.SshError, match="collection took over 0.5 s"):
        ssh.collect(target)


def test_details_of_many_arrays_are_all_collected(ssh_host, sshd):
    detail = (SHARED_FIXTURES / "mdadm-detail" / "einverne-raid1-clean-bitmap.txt").read_text()
    names = ["md99", "md1", "md2", "md3", "md4", "md5"]
    sshd.reply(
        seed_layout_mdstat(), {name: detail.replace("/dev/md2", f"/dev/{name}") for name in names}
    )
    collected = ssh.collect(ssh_target(ssh_host))
    assert sorted(collected.details) == sorted(names)
    assert collected.details["md4"].startswith("/dev/md4:")


def test_the_ssh_address_passes_the_outbound_guard_at_save_and_at_connect(
    ssh_host, sshd, hosts_entry
):
    from django.core.exceptions import ValidationError

    name = hosts_entry("127.0.0.1")  # a name: the host key is checked against it, not the IP
    ssh_host.ssh_address = name
    ssh_host.full_clean()
    ssh_host.save()
    sshd.reply(seed_layout_mdstat())
    assert ssh.collect(ssh_target(ssh_host)).mdstat == seed_layout_mdstat()

    hosts_entry("169.254.169.254")  # DNS rebinding: the name moved after it was saved
    with pytest.raises(ssh.SshError) as refused:
        ssh.collect(ssh_target(ssh_host))
    assert str(refused.value) == (
        f"{sshd.user}@{name}:{sshd.port}: {name} (169.254.169.254) is refused: "
        "the instance metadata service"
    )
    with pytest.raises(ValidationError) as invalid:
        ssh_host.full_clean()
    assert invalid.value.message_dict["ssh_address"] == [
        f"{name} (169.254.169.254) is refused: the instance metadata service"
    ]


# --- what a hostile or broken host prints ----------------------------------------------------


def test_output_without_end_is_cut_at_the_limit_while_it_is_read(ssh_host, sshd, settings):
    settings.VIGIL_RAID_SSH_COMMAND_TIMEOUT = 60.0
    sshd.reply_raw(endless=True)  # cat /dev/zero: it never ends
    collect_host(ssh_host.pk)
    ssh_host.refresh_from_db()  # cut at 1 MiB while read: not the 60 s timeout, nor all of it
    assert ssh_host.last_error.endswith("'cat /proc/mdstat' printed more than 1.0 MiB")
    assert ssh_host.last_report is None
    assert not Array.objects.filter(host=ssh_host).exists()


@pytest.mark.parametrize(
    ("output", "error"),
    [
        (
            seed_layout_mdstat().encode().replace(b"sdk[1]", b"sd\xff\xfe[1]"),
            "unreadable output: /proc/mdstat, line 5: bytes that are not UTF-8 text",
        ),
        (
            seed_layout_mdstat().encode().replace(b"sdk[1]", b"sd\x00k[1]"),
            "unreadable output: /proc/mdstat, line 5: a NUL character, which cannot be stored",
        ),
        (
            seed_layout_mdstat().encode().replace(b"sdk[1]", b"sdk[123456789012345678901234]"),
            "unreadable output: /proc/mdstat, line 5: member number 123456789012345678901234 is "
            "out of range",
        ),
        (
            seed_layout_mdstat().encode().replace(b"md5 :", b"md" + b"5" * 70 + b" :"),
            "unreadable output: /proc/mdstat, line 5: array name longer than 64 characters",
        ),
    ],
    ids=["not-utf-8", "nul", "24-digit-number", "long-name"],
)
def test_output_that_cannot_be_stored_is_the_hosts_error_on_its_page(
    ssh_host, sshd, admin_client, output, error
):
    sshd.reply_raw(output)
    collect_host(ssh_host.pk)
    ssh_host.refresh_from_db()
    assert ssh_host.last_error.startswith(error)
    assert not Array.objects.filter(host=ssh_host).exists()
    page = admin_client.get(f"/raid/hosts/{ssh_host.pk}/").content.decode()
    assert "Collection failing" in page
    assert escape(error) in page


def test_a_detail_without_end_is_a_warning_and_the_rest_is_stored(ssh_host, sshd):
    sshd.reply(seed_layout_mdstat())
    (sshd.replies / "detail-md1").symlink_to("/dev/zero")
    collect_host(ssh_host.pk)
    ssh_host.refresh_from_db()
    assert (
        "mdadm --detail /dev/md1: 'sudo -n mdadm --detail /dev/md1' printed more than 1.0 MiB"
        in (ssh_host.last_error)
    )
    assert set(statuses(ssh_host).values()) == {"ok"}


def test_the_pull_reads_each_disks_smart_and_names_and_judges_the_failing_one(ssh_host, sshd):
    smart = SHARED_FIXTURES / "smartctl"
    healthy = (smart / "scrutiny-sata-wdc-healthy.json").read_text()
    failing = (smart / "scrutiny-usb-jmicron-failing.json").read_text()
    disks = ssh.leaf_disks(seed_layout_mdstat())
    sshd.reply(
        seed_layout_mdstat(),
        smart=dict.fromkeys(disks, healthy) | {"sdi": failing},
        devlinks=seed_devlinks(),
        sysfs={"md2": {"sync_action": "check", "last_sync_action": "resync", "mismatch_cnt": "0"}},
    )
    collect_host(ssh_host.pk)
    sdi = Disk.objects.get(host=ssh_host, device="sdi")
    assert (sdi.serial, sdi.failing, sdi.domain) == ("MSK423Y20S3HBC", True, "storage-b")
    assert sdi.iscsi_target == "iqn.2026-01.example.storage-b:disks"
    md3 = Array.objects.get(host=ssh_host, name="md3")
    assert md3.status == "warning"
    assert md3.advice[0]["path"] == "md99 → md3 → sdi"
    assert Array.objects.get(host=ssh_host, name="md2").scrub_text == "check running"

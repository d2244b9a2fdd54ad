"""What today's kernel and mdadm say beyond the 2018 words (apps/raid/kernel.py): a ``broken``
array, a RAID-0 that mdadm calls ``State : broken``, a repair that /proc/mdstat prints as a
resync, and a state word nobody knows, judged alike whether the host pushes or is pulled over
SSH (the real sshd), and the words of a degraded array that still has failures to spare."""

from __future__ import annotations

import pytest

from apps.lib.status import Status
from apps.raid.demo import seed_layout_mdstat
from apps.raid.evidence import reconcile
from apps.raid.models import Array, Host
from apps.raid.parse_mdadm import parse as parse_detail
from apps.raid.parse_mdstat import parse
from apps.raid.parse_sysfs import SysfsState
from apps.raid.report import assess
from apps.raid.tasks import collect_host
from apps.raid.verdict import host_verdicts
from tests.helpers import SHARED_FIXTURES

BROKEN = (SHARED_FIXTURES / "mdstat" / "kernel-6.12-raid0-broken-beside-raid1.txt").read_text()
#: The same host on a kernel from 5.4 to 6.11: /proc/mdstat still says "active".
BROKEN_BEFORE_6_12 = BROKEN.replace("md0 : broken raid0", "md0 : active raid0")
DETAIL_BROKEN = (
    SHARED_FIXTURES / "mdadm-detail" / "mdadm-4.2-raid0-broken-member-missing.txt"
).read_text()
REPAIR = (SHARED_FIXTURES / "mdstat" / "kernel-raid1-repair-printed-as-resync.txt").read_text()
UNKNOWN_WORD = (
    SHARED_FIXTURES / "hostile" / "mdstat--unknown-state-word-beside-healthy-arrays.txt"
).read_text()

MD1_OK = ("ok", "md1 survives any 1 more disk failure")
BROKEN_RAID0 = "a member is gone and md fails writes to it"

#: name -> (mdstat, details, sysfs words, {array: (status, the reason's words)})
SCENARIOS = {
    "broken-in-mdstat": (
        BROKEN,
        {},
        {"md1": {"array_state": "clean", "sync_action": "idle"}},
        {
            "md0": ("critical", f"md0: broken (/proc/mdstat): {BROKEN_RAID0}"),
            "md1": MD1_OK,
        },
    ),
    "raid0-state-broken-in-mdadm-detail": (
        BROKEN_BEFORE_6_12,
        {"md0": DETAIL_BROKEN},
        {},
        {
            "md0": ("critical", f"md0: broken (mdadm: State : broken): {BROKEN_RAID0}"),
            "md1": MD1_OK,
        },
    ),
    "raid0-array-state-broken": (
        BROKEN_BEFORE_6_12,
        {"md0": DETAIL_BROKEN},
        {"md0": {"array_state": "broken"}, "md1": {"array_state": "clean"}},
        {
            "md0": (
                "critical",
                f"md0: broken (array_state, mdadm: State : broken): {BROKEN_RAID0}",
            ),
            "md1": MD1_OK,
        },
    ),
    "repair-in-progress": (
        REPAIR,
        {},
        {"md1": {"array_state": "active", "sync_action": "repair"}},
        {
            "md1": (
                "ok",
                "md1 survives any 1 more disk failure, repair 12.6% done (sync_action says "
                "repair; /proc/mdstat prints it as resync)",
            )
        },
    ),
    "unknown-state-word": (
        UNKNOWN_WORD,
        {},
        {},
        {
            "md0": ("ok", "md0 survives any 1 more disk failure"),
            "md1": (
                "unknown",
                "md1: /proc/mdstat line 5: state 'frobnicated' is not one Vigil knows (active, "
                "broken, inactive): 'md1 : frobnicated raid1 sdd[1] sdc[0]'",
            ),
            "md2": ("ok", "md2 survives any 1 more disk failure"),
        },
    ),
}


def grep_lines(words: dict[str, dict[str, str]]) -> str:
    """What ``grep -s . /sys/block/mdX/md/...`` prints, as the push agent sends it."""
    return "".join(
        f"/sys/block/{name}/md/{attribute}:{word}\n"
        for name, found in words.items()
        for attribute, word in found.items()
    )


def without_domain_rules(host: Host) -> Host:
    """The test host, its failure-domain rules (the seed's servers) left out."""
    Host.objects.filter(pk=host.pk).update(domain_rules={})
    host.domain_rules = {}
    return host


def judged(host) -> dict[str, tuple[str, str]]:
    return {
        name: (status, reason)
        for name, status, reason in Array.objects.filter(host=host).values_list(
            "name", "status", "reason"
        )
    }


# --- through the push endpoint and the SSH pull alike ----------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_pushed_report_is_judged_as_the_kernel_means_it(api_client, host, scenario):
    mdstat, details, words, expected = SCENARIOS[scenario]
    without_domain_rules(host)
    body = {"mdstat": mdstat, "details": details, "sysfs": grep_lines(words)}
    response = api_client.post(
        f"/api/raid/hosts/{host.pk}/report",
        body,
        format="json",
        HTTP_AUTHORIZATION=f"Bearer {host.issue_token()}",
    )
    assert response.status_code == 200, response.content
    assert judged(host) == expected


@pytest.mark.django_db
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_report_pulled_over_ssh_is_judged_as_the_kernel_means_it(ssh_host, sshd, scenario):
    mdstat, details, words, expected = SCENARIOS[scenario]
    without_domain_rules(ssh_host)
    sshd.reply(mdstat, details, sysfs=words)
    collect_host(ssh_host.pk)
    ssh_host.refresh_from_db()
    assert ssh_host.last_report is not None, ssh_host.last_error
    assert judged(ssh_host) == expected


@pytest.mark.django_db
def test_the_kernels_words_are_kept_on_the_array(ssh_host, sshd):
    sshd.reply(REPAIR, sysfs={"md1": {"array_state": "active", "sync_action": "repair"}})
    collect_host(ssh_host.pk)
    md1 = Array.objects.get(host=ssh_host, name="md1")
    assert (md1.state, md1.array_state, md1.sync_action, md1.sync_percent) == (
        "active",
        "active",
        "repair",
        12.6,
    )
    sshd.reply(BROKEN, sysfs={"md0": {"array_state": "broken"}})  # a RAID-0: no sync_action
    collect_host(ssh_host.pk)
    md0 = Array.objects.get(host=ssh_host, name="md0")
    assert (md0.state, md0.array_state, md0.headroom) == ("broken", "broken", None)
    assert md0.headroom_text == "md0 is broken: md fails its writes"


@pytest.mark.django_db
def test_without_sync_action_a_repair_is_judged_as_the_resync_it_prints(ssh_host, sshd):
    sshd.reply(REPAIR)  # an older agent, or a host that refuses the grep
    collect_host(ssh_host.pk)
    md1 = Array.objects.get(host=ssh_host, name="md1")
    assert (md1.status, md1.sync_action) == ("warning", "resync")


# --- the pure parts ---------------------------------------------------------------------------


def test_reconcile_folds_array_state_and_mdadm_into_the_state_and_names_who_said_it():
    mdstat, evidence = reconcile(
        parse(BROKEN_BEFORE_6_12),
        {"md0": parse_detail(DETAIL_BROKEN)},
        {"md0": SysfsState(array_state="broken"), "md1": SysfsState(array_state="clean")},
    )
    assert [a.state for a in mdstat.arrays] == ["broken", "active"]
    assert evidence["md0"].broken_by == ("array_state", "mdadm --detail")
    assert evidence["md1"].broken_by == ()


def test_a_repair_is_a_scrub_not_a_rebuild_and_a_check_stays_a_check():
    def action(text: str, sync_action: str) -> str:
        folded, _ = reconcile(parse(text), None, {"md1": SysfsState(sync_action=sync_action)})
        return folded.arrays[0].sync.action

    assert action(REPAIR, "repair") == "repair"
    assert action(REPAIR.replace("resync =", "check ="), "check") == "check"
    # only a printed resync can be a repair
    assert action(REPAIR.replace("resync =", "recovery ="), "repair") == "recovery"
    assert action(REPAIR, "frozen") == "resync"


def test_mdadms_resync_status_is_a_repair_when_sync_action_says_so():
    detail = (
        "/dev/md1:\n        Raid Level : raid1\n             State : clean, resyncing \n"
        "     Resync Status : 12% complete\n"
    )
    quiet = REPAIR.replace(REPAIR.split("\n")[3] + "\n", "")  # mdstat read before it started
    resync = assess(quiet, {"md1": detail}).arrays[0]
    assert resync.verdict.status is Status.WARNING
    repair = assess(quiet, {"md1": detail}, sysfs="/sys/block/md1/md/sync_action:repair\n").arrays[
        0
    ]
    assert repair.verdict.status is Status.OK
    assert repair.verdict.figures["sync_action"] == "repair"


def test_the_broken_word_of_newer_kernels_reads_as_critical_beside_a_healthy_array():
    verdicts = host_verdicts(parse(BROKEN))
    assert verdicts["md0"].status is Status.CRITICAL
    assert verdicts["md1"].status is Status.OK


def test_a_broken_mirror_says_md_marks_it_failed():
    text = BROKEN.replace("md1 : active raid1", "md1 : broken raid1")
    reason = host_verdicts(parse(text))["md1"].reason
    assert reason == "md1: broken (/proc/mdstat): md marks it failed and fails writes to it"


def test_an_array_above_a_broken_one_is_critical_too():
    text = (
        "Personalities : [raid0] [raid1] \n"
        "md9 : active raid1 md0[1] sde[0]\n"
        "      2093056 blocks super 1.2 [2/2] [UU]\n" + BROKEN.split("\n", 1)[1]
    )
    report = assess(text)
    md9 = next(a for a in report.arrays if a.name == "md9")
    assert md9.verdict.status is Status.CRITICAL
    assert "can lose nothing more" in md9.verdict.reason


def test_a_degraded_array_with_failures_to_spare_says_why_it_is_critical():
    """issue 25: md2 was "Critical" while its reason said "survives any 1 more disk failure"."""
    md2 = next(
        a
        for a in assess(seed_layout_mdstat(rebuilding="sdh", percent=37.4)).arrays
        if a.name == "md2"
    )
    assert md2.verdict.status is Status.CRITICAL
    assert md2.verdict.reason == (
        "md2: degraded: 2 of 3 members in sync [U_U]; recovery 37.4% done, ETA 1 h 16 min at "
        "144.7 MiB/s; still survives any 1 more disk failure, short of the 2 it was built to "
        "survive"
    )

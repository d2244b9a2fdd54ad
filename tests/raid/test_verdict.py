"""Array statuses with reasons and figures, on the published samples and the seed layout."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from apps.lib.status import Status
from apps.raid.demo import seed_layout_mdstat
from apps.raid.errors import ParseError
from apps.raid.parse_mdadm import parse as parse_detail
from apps.raid.parse_mdstat import parse
from apps.raid.topology import Topology
from apps.raid.verdict import array_verdict, host_verdicts
from tests.helpers import SHARED_FIXTURES
from tests.raid.mutations import mutated

FIXTURES = SHARED_FIXTURES


def verdicts(sample: str) -> dict:
    return host_verdicts(parse((FIXTURES / "mdstat" / f"{sample}.txt").read_text()))


@pytest.mark.parametrize(
    ("sample", "array", "status", "words"),
    [
        ("procfs-fixture-many-states", "md3", Status.OK, "survives any 2 more disk failures"),
        ("procfs-fixture-many-states", "md4", Status.CRITICAL, "inactive"),
        ("procfs-fixture-many-states", "md219", Status.CRITICAL, "inactive"),
        ("procfs-fixture-many-states", "md6", Status.CRITICAL, "failed member sdb2"),
        ("procfs-fixture-many-states", "md7", Status.CRITICAL, "degraded: 3 of 4"),
        ("procfs-fixture-many-states", "md9", Status.CRITICAL, "failed member sde, sdf"),
        ("procfs-fixture-many-states", "md8", Status.WARNING, "resync 8.5% done, ETA 17 min"),
        ("procfs-fixture-many-states", "md201", Status.OK, "check 5.7% done"),
        ("procfs-fixture-many-states", "md10", Status.OK, "no redundancy by design"),
        ("procfs-fixture-many-states", "md120", Status.OK, "linear, no redundancy by design"),
        ("procfs-fixture-many-states", "md42", Status.CRITICAL, "reshape 56.1% done"),
        ("archwiki-raid10-far-copies-resync-leading-space", "md127", Status.WARNING, "34 h 32 min"),
        ("pymdstat-05-raid5-recovery", "md127", Status.CRITICAL, "can lose nothing more"),
        ("pymdstat-08-inactive-raid5-with-level", "md0", Status.CRITICAL, "inactive"),
        ("pymdstat-03-raid5-degraded-3-of-4", "md0", Status.CRITICAL, "degraded: 3 of 4"),
        ("linux-raid-2019-raid10-offset-copies-2-failed", "md1", Status.CRITICAL, "stopped"),
        ("scratchbox-nested-raid0-over-raid6", "md121", Status.OK, "survives any 2 more"),
        ("ubuntuforums-2008-raid5-resync-v090", "md0", Status.WARNING, "resync 27.3% done"),
    ],
)
def test_it_judges_every_kind_of_array_in_the_samples(sample, array, status, words):
    verdict = verdicts(sample)[array]
    assert verdict.status is status
    assert words in verdict.reason
    assert verdict.reason.startswith(array)


def test_it_gives_rebuild_percent_speed_and_eta_as_numbers():
    verdict = verdicts("pymdstat-05-raid5-recovery")["md127"]
    assert verdict.figures["sync_action"] == "recovery"
    assert verdict.figures["sync_percent"] == 12.6
    assert verdict.figures["speed_kib_per_sec"] == 33440
    assert verdict.figures["eta_minutes"] == 127.5
    assert verdict.figures["stalled"] is False
    assert verdict.figures["headroom"] == 0


def test_it_warns_of_a_delayed_resync_on_a_healthy_mirror():
    text = (
        "Personalities : [raid1]\n"
        "md9 : active raid1 sdb2[1] sda2[0]\n"
        "      523968 blocks super 1.2 [2/2] [UU]\n"
        "\tresync=DELAYED\n"
    )
    verdict = host_verdicts(parse(text))["md9"]
    assert verdict.status is Status.WARNING
    assert "resync delayed" in verdict.reason


@pytest.mark.parametrize(
    "progress",
    [
        "[>....................]  resync =  0.0% (0/976767872) finish=0.0min speed=0K/sec",
        "[>....................]  resync =  0.1% (1024/976767872) finish=9999999.9min speed=1K/sec",
    ],
)
def test_it_calls_a_rebuild_with_no_speed_or_an_absurd_eta_stalled(progress):
    text = (
        "Personalities : [raid5]\n"
        "md0 : active raid5 sda1[0] sdc1[2] sdb1[1]\n"
        "      976767872 blocks level 5, 64k chunk, algorithm 2 [3/3] [UUU]\n"
        f"      {progress}\n"
    )
    verdict = host_verdicts(parse(text))["md0"]
    assert verdict.status is Status.WARNING
    assert "stalled" in verdict.reason
    assert verdict.figures["stalled"] is True


def test_the_seed_is_ok_and_says_how_many_disks_it_can_lose():
    result = host_verdicts(parse(seed_layout_mdstat()))
    assert {v.status for v in result.values()} == {Status.OK}
    assert result["md99"].reason == "md99 survives any 2 more disk failures"


def test_a_rebuild_in_the_seed_is_critical_below_and_a_warning_above():
    result = host_verdicts(parse(seed_layout_mdstat(rebuilding="sdd", percent=37.4)))
    assert result["md3"].status is Status.CRITICAL
    assert "recovery 37.4% done, ETA 1 h 16 min" in result["md3"].reason
    assert result["md99"].status is Status.WARNING
    assert "member array md3 lost redundancy" in result["md99"].reason
    assert result["md99"].figures["headroom"] == 1


def test_a_nested_raid0_whose_mirror_is_down_to_its_last_copy_is_critical():
    result = host_verdicts(parse(seed_layout_mdstat(failed={"sdd", "sdi"})))
    assert result["md99"].status is Status.CRITICAL
    assert "can lose nothing more (no headroom left in md3)" in result["md99"].reason


def test_a_plain_raid0_is_ok_but_one_with_a_failed_member_is_not():
    healthy = verdicts("pymdstat-12-raid0-loop-32k")["md127"]
    assert healthy.status is Status.OK
    broken = (
        "Personalities : [raid0]\n"
        "md127 : active raid0 loop1[1](F) loop0[0]\n"
        "      10475520 blocks super 1.2 32k chunks\n"
    )
    verdict = host_verdicts(parse(broken))["md127"]
    assert verdict.status is Status.CRITICAL
    assert "stopped" in verdict.reason


def test_it_reads_failed_and_rebuild_progress_from_mdadm_detail():
    mdstat = parse(
        "Personalities : [raid1]\n"
        "md90 : active raid1 sdd1[2] sdc1[0]\n"
        "      488253440 blocks super 1.2 [2/2] [UU]\n"
    )
    failed = parse_detail(
        (
            FIXTURES / "mdadm-detail" / "linux-raid-2022-raid1-clean-failed-faulty-members.txt"
        ).read_text()
    )
    assert array_verdict(mdstat.arrays[0], detail=failed).status is Status.CRITICAL
    resyncing = parse_detail(
        (
            FIXTURES / "mdadm-detail" / "ubuntuforums-2008-raid5-active-resyncing-v090.txt"
        ).read_text()
    )
    verdict = array_verdict(mdstat.arrays[0], detail=resyncing)
    assert verdict.status is Status.WARNING
    assert (verdict.figures["sync_action"], verdict.figures["sync_percent"]) == ("resync", 29.0)


def test_every_sample_array_gets_a_verdict_with_a_reason():
    for sample in sorted((FIXTURES / "mdstat").glob("*.txt")):
        for name, verdict in host_verdicts(parse(sample.read_text())).items():
            assert verdict.reason.startswith(name)
            assert verdict.status in set(Status)


SAMPLE_TEXTS = [p.read_text(encoding="utf-8") for p in sorted((FIXTURES / "mdstat").glob("*.txt"))]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(SAMPLE_TEXTS))
def test_whatever_the_parser_accepts_gets_a_verdict_and_a_headroom(text):
    try:
        mdstat = parse(text)
    except ParseError:
        return
    topology = Topology(mdstat)
    for name, verdict in host_verdicts(mdstat).items():
        assert verdict.reason.startswith(name)
        assert topology.domain_headroom(name, {}).survivable >= 0

"""Storing a host's report: arrays, members, tree, statuses through alerts.record, staleness."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from apps.alerts.models import Transition
from apps.raid.collect import ingest, mark_silent_hosts
from apps.raid.demo import seed_layout_mdstat
from apps.raid.errors import ParseError
from apps.raid.models import Array, Host, Member
from tests.helpers import SHARED_FIXTURES

pytestmark = pytest.mark.django_db


def snapshot(host: Host) -> list[tuple]:
    arrays = Array.objects.filter(host=host).order_by("name")
    rows = [
        tuple(a.__dict__[f] for f in ("name", "status", "reason", "sync_percent")) for a in arrays
    ]
    members = list(Member.objects.filter(array__host=host).values_list("device", "state"))
    host.refresh_from_db()
    return [rows, members, host.mdstat_text, host.last_report]


def test_it_stores_the_seed_layout_as_a_tree_that_is_ok(host):
    transitions = ingest(host, seed_layout_mdstat())
    md99 = Array.objects.get(host=host, name="md99")
    assert md99.status == "ok"
    assert md99.parent is None
    assert sorted(md99.children.values_list("name", flat=True)) == [f"md{i}" for i in range(1, 6)]
    assert md99.domain_headroom == 2
    assert md99.domain_headroom_text.startswith(
        "md99 survives the loss of any 2 of the 3 storage servers"
    )
    assert md99.headroom == 2
    assert {t.new_status for t in transitions} == {"ok"}
    assert len(transitions) == 6  # unknown -> ok, once per array
    md1 = Array.objects.get(host=host, name="md1")
    assert list(md1.members.values_list("device", "state", "domain")) == [
        ("sdl", "in sync", "storage-c"),
        ("sdg", "in sync", "storage-b"),
        ("sdb", "in sync", "storage-a"),
    ]
    assert md1.level == "raid10" and md1.raid_disks == 3 and md1.disk_status == "UUU"


def test_a_failed_disk_makes_its_mirror_critical_the_stack_a_warning_and_one_server_less(host):
    ingest(host, seed_layout_mdstat())
    transitions = ingest(host, seed_layout_mdstat(failed=["sdb"]))
    by_name = {t.subject_label: t for t in transitions}
    assert set(by_name) == {"storage-client:md1", "storage-client:md99"}
    assert by_name["storage-client:md1"].new_status == "critical"
    assert "failed member sdb" in by_name["storage-client:md1"].reason
    assert by_name["storage-client:md99"].new_status == "warning"
    md99 = Array.objects.get(host=host, name="md99")
    assert md99.domain_headroom == 1
    assert "any 1 of the 3 storage servers" in md99.domain_headroom_text
    sdb = Member.objects.get(array__name="md1", device="sdb")
    assert (sdb.state, sdb.flags) == ("faulty", "F")


def test_a_rebuild_keeps_its_progress_speed_and_eta_as_numbers(host):
    ingest(host, seed_layout_mdstat(rebuilding="sdh", percent=37.4))
    md2 = Array.objects.get(host=host, name="md2")
    assert md2.status == "critical"  # degraded while it recovers
    assert "recovery 37.4% done, ETA 1 h 16 min at 144.7 MiB/s" in md2.reason
    assert md2.sync_action == "recovery"
    assert md2.sync_percent == 37.4
    assert md2.speed_kib_per_sec == 148213
    assert 70 < md2.eta_minutes < 80
    assert md2.stalled is False
    assert md2.members.get(device="sdh").state == "rebuilding"


def test_reporting_the_same_text_twice_writes_no_new_transition(host):
    ingest(host, seed_layout_mdstat())
    assert ingest(host, seed_layout_mdstat()) == []
    assert Transition.objects.count() == 6


def test_a_report_refused_as_a_whole_changes_nothing(host):
    ingest(host, seed_layout_mdstat())
    before = snapshot(host)
    refused = seed_layout_mdstat(failed=["sdb"]).replace("sdl[2]", "sdl[123456789012345678901234]")
    with pytest.raises(ParseError, match=r"^/proc/mdstat, line \d+: member number 1234"):
        ingest(host, refused)
    detail = (SHARED_FIXTURES / "mdadm-detail" / "einverne-raid1-clean-bitmap.txt").read_text()
    with pytest.raises(ParseError, match="^mdadm --detail md1, line 3: a NUL character"):
        lines = detail.split("\n")
        lines[2] = "what is \x00 this"
        ingest(host, seed_layout_mdstat(failed=["sdb"]), {"md1": "\n".join(lines)})
    assert snapshot(host) == before
    assert Transition.objects.count() == 6


def test_one_arrays_odd_header_makes_only_that_array_unknown(host):
    ingest(host, seed_layout_mdstat())
    odd = seed_layout_mdstat(failed=["sdb"]).replace("md3 : active", "md3 ; active")
    ingest(host, odd)
    statuses = dict(Array.objects.filter(host=host).values_list("name", "status"))
    assert statuses == {
        "md1": "critical",  # still judged: sdb failed
        "md2": "ok",
        "md3": "unknown",
        "md4": "ok",
        "md5": "ok",
        "md99": "unknown",  # above md3: its headroom depends on it
    }
    md3 = Array.objects.get(host=host, name="md3")
    assert md3.reason.startswith("md3: /proc/mdstat line ")
    assert "unreadable array header: 'md3 ; active raid10 sdn[2] sdi[1] sdd[0]'" in md3.reason
    md99 = Array.objects.get(host=host, name="md99")
    assert md99.reason == "md99: headroom unknown: member array md3 could not be read"
    assert md99.headroom is None


def test_an_unreadable_detail_makes_only_its_array_unknown_or_worse(host):
    detail = (SHARED_FIXTURES / "mdadm-detail" / "einverne-raid1-clean-bitmap.txt").read_text()
    lines = detail.split("\n")
    lines[2] = "what is this"
    odd = "\n".join(lines)
    ingest(host, seed_layout_mdstat(), {"md1": odd, "md2": odd})
    statuses = dict(Array.objects.filter(host=host).values_list("name", "status"))
    assert statuses["md1"] == statuses["md2"] == "unknown"
    assert {statuses[name] for name in ("md3", "md4", "md5", "md99")} == {"ok"}
    md1 = Array.objects.get(host=host, name="md1")
    assert md1.reason == (
        "md1 survives any 2 more disk failures; its mdadm --detail md1, line 3: unreadable line: "
        "'what is this'"
    )
    host.refresh_from_db()
    assert host.details_text["md1"] == odd  # kept for the host page
    ingest(host, seed_layout_mdstat(failed=["sdb"]), {"md1": odd})
    md1.refresh_from_db()
    assert md1.status == "critical"  # what /proc/mdstat says alone is worse


def test_it_uses_mdadm_detail_for_member_slots_and_states(host):
    text = (SHARED_FIXTURES / "mdstat" / "einverne-raid1-4disk-bitmap.txt").read_text()
    detail = (SHARED_FIXTURES / "mdadm-detail" / "einverne-raid1-clean-bitmap.txt").read_text()
    from apps.raid.parse_mdadm import parse as parse_detail
    from apps.raid.parse_mdstat import parse

    name = parse(text).arrays[0].name
    rows = {m.name: m for m in parse_detail(detail).members if m.name}
    ingest(host, text, {f"/dev/{name}": detail})
    host.refresh_from_db()
    assert host.details_text == {name: detail}  # kept under the array's name
    for member in Member.objects.filter(array__name=name):
        if member.device in rows:
            assert member.slot == rows[member.device].raid_device
            assert member.state == rows[member.device].state


def test_an_array_that_left_mdstat_becomes_unknown_and_leaves_the_tree(host):
    ingest(host, seed_layout_mdstat())
    text = (SHARED_FIXTURES / "mdstat" / "pymdstat-01-empty-personalities.txt").read_text()
    transitions = ingest(host, text)
    assert {t.new_status for t in transitions} == {"unknown"}
    md99 = Array.objects.get(host=host, name="md99")
    assert (md99.present, md99.status) == (False, "unknown")
    assert md99.reason == "md99: no longer in /proc/mdstat"
    assert not Array.objects.filter(host=host, present=True).exists()


def test_a_host_that_stops_reporting_goes_unknown_after_the_threshold(host, settings):
    settings.VIGIL_RAID_STALE_MINUTES = 15
    start = timezone.now()
    ingest(host, seed_layout_mdstat(), now=start)
    assert mark_silent_hosts(now=start + timedelta(minutes=14)) == []
    transitions = mark_silent_hosts(now=start + timedelta(minutes=16))
    assert len(transitions) == 6
    assert {t.new_status for t in transitions} == {"unknown"}
    assert "no report from storage-client since" in transitions[0].reason
    assert mark_silent_hosts(now=start + timedelta(minutes=30)) == []  # once
    with time_machine.travel(start + timedelta(minutes=31), tick=False):
        back = ingest(host, seed_layout_mdstat())
    assert {t.new_status for t in back} == {"ok"}


def test_ssh_hosts_wait_at_least_three_intervals_before_going_unknown(host, settings):
    settings.VIGIL_RAID_STALE_MINUTES = 15
    host.collection, host.interval_s = Host.Collection.SSH, 3600
    assert host.stale_after == timedelta(hours=3)


def test_a_domain_rule_set_that_puts_two_mirror_halves_on_one_server_is_a_warning(host):
    host.domain_rules = {"sd[b-f]": "storage-a", "sd[g-p]": "storage-b"}
    ingest(host, seed_layout_mdstat())
    md99 = Array.objects.get(host=host, name="md99")
    md1 = Array.objects.get(host=host, name="md1")
    assert md1.status == "ok"  # md1 alone can lose storage-b (it keeps sdb)
    assert md99.status == "ok"
    host.domain_rules = {"sd[b-k]": "storage-a", "sd[l-p]": "storage-c"}
    ingest(host, seed_layout_mdstat())
    md1.refresh_from_db()
    assert md1.domain_headroom == 1


def test_the_region_moves_with_the_host(host, site):
    from apps.regions.models import Region

    ingest(host, seed_layout_mdstat())
    other = Region.objects.create(code="dc-2", kind=Region.Kind.SITE)
    host.region = other
    host.save()
    ingest(host, seed_layout_mdstat())
    assert set(Array.objects.filter(host=host).values_list("region", flat=True)) == {other.pk}


def test_it_writes_only_the_arrays_and_members_that_changed(host, django_assert_max_num_queries):
    ingest(host, seed_layout_mdstat())
    before = dict(Member.objects.values_list("pk", "device"))

    with django_assert_max_num_queries(12):  # the same report: no array or member rewritten
        ingest(host, seed_layout_mdstat())
    assert dict(Member.objects.values_list("pk", "device")) == before

    ingest(host, seed_layout_mdstat(failed=["sdb"]))
    md1 = Array.objects.get(host=host, name="md1")
    assert md1.members.get(device="sdb").state == "faulty"
    untouched = Member.objects.filter(array__name__in=["md2", "md3", "md4", "md5"])
    assert set(untouched.values_list("pk", flat=True)) <= set(before)  # md1 and md99 changed
    assert Array.objects.filter(host=host, last_seen=md1.last_seen).count() == 6

"""EFS from its clients' side, the pure parts: attribution, increases with resets, metering
ranges and the mount options against AWS's recommended ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from apps.efs import clients
from apps.efs.parse_mountstats import parse

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "mountstats"


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        ("fs-0123abcd.efs.eu-west-1.amazonaws.com", ("fs-0123abcd", "eu-west-1", "name")),
        (
            "eu-west-1a.fs-0123abcd.efs.eu-west-1.amazonaws.com",
            ("fs-0123abcd", "eu-west-1", "name"),
        ),
        ("FS-0123ABCD.EFS.US-EAST-1.AMAZONAWS.COM", ("fs-0123abcd", "us-east-1", "name")),
        (
            "fs-0123456789abcdef0.efs.cn-north-1.amazonaws.com.cn",
            ("fs-0123456789abcdef0", "cn-north-1", "name"),
        ),
        ("10.0.1.5", ("fs-9", "", "mount target address")),
        ("fs-0123abcd.efs.eu-west-1.amazonaws.com.evil.example", None),
        ("nfs.example.org", None),
        ("127.0.0.1", None),
    ],
)
def test_it_ties_a_mount_to_an_efs_file_system_by_name_or_mount_target(server, expected):
    found = clients.attribute(server, {"10.0.1.5": "fs-9"})
    assert (None if found is None else (found.filesystem_id, found.region, found.by)) == expected


def _counters(**changes):
    base = dict.fromkeys(clients.COUNTERS, 100)
    base.update(changes)
    return base


def test_an_increase_is_the_difference_between_two_pushes():
    grown = clients.increase(_counters(), 50, _counters(read_bytes=150), 110, 60)
    assert grown["read_bytes"] == 50 and grown["write_ops"] == 0


def test_a_remount_or_a_counter_that_went_back_counts_from_zero():
    remounted = clients.increase(_counters(), 5000, _counters(read_bytes=120), 30, 60)
    assert remounted["read_bytes"] == 120 and remounted["write_ops"] == 100
    went_back = clients.increase(_counters(), None, _counters(read_ops=7), None, 60)
    assert went_back["read_ops"] == 7


def test_no_increase_without_an_earlier_push_or_time_between():
    assert clients.increase(None, None, _counters(), 1, 60) is None
    assert clients.increase(_counters(), 1, _counters(), 1, 0) is None


def test_counters_of_a_real_mount_add_up_its_kinds():
    (mount,) = parse((FIXTURES / "nfs41-k8s-procfs.txt").read_text())
    c = clients.counters(mount)
    assert c["write_bytes"] == 39087991255 and c["write_ops"] == 334849
    assert c["read_ops"] == 34096 and c["metadata_ops"] == mount.kinds()["metadata"]["ops"]


def test_the_metered_range_holds_every_way_the_operations_could_have_been_sized():
    kib = 1024
    # two reads: 1 KiB and 100 KiB -> metered 32 + 100 KiB; sizes unknown to the client
    low, high = clients.metered_range(2, 101 * kib, 0)
    assert low <= 132 * kib <= high
    assert (low, high) == (101 * kib, 32 * kib + 101 * kib)
    # 10 metadata ops at 4 KiB each
    assert clients.metered_range(0, 0, 10) == (40 * kib, 40 * kib)


def test_it_names_each_option_that_differs_from_awss_with_awss_reason():
    (mount,) = parse((FIXTURES / "nfs41-k8s-procfs.txt").read_text())
    found = {f.option: f for f in clients.option_findings(mount.option_map, mount.version)}
    assert set(found) == {"rsize", "wsize", "noresvport"}
    assert found["rsize"].have == "rsize=131072" and found["rsize"].want == "rsize=1048576"
    assert "reconnection" in found["noresvport"].reason
    assert found["rsize"].source.startswith("https://docs.aws.amazon.com/efs/")
    soft = clients.option_findings({"vers": "4.0", "soft": "", "timeo": "10"}, "4.0")
    assert {f.option for f in soft} >= {"vers", "hard", "timeo", "retrans", "noresvport"}


def test_a_mount_with_awss_options_has_no_finding():
    options = {
        "vers": "4.1",
        "rsize": "1048576",
        "wsize": "1048576",
        "hard": "",
        "timeo": "600",
        "retrans": "2",
        "noresvport": "",
    }
    assert clients.option_findings(options) == []


def test_the_lock_trap_groups_slow_lookups_per_server_and_names_stuck_locks():
    slow = {
        "server": "fs-1.efs.eu-west-1.amazonaws.com",
        "address": "10.0.0.5",
        "reverse_seconds": 5.2,
    }
    seen = [(f"web-{i}", [slow], []) for i in range(5)]
    seen.append(
        ("db-1", [{**slow, "reverse_seconds": 0.2}], [{"mountpoint": "/mnt/efs", "ok": False}])
    )
    notes = clients.lock_trap(seen, 1.0)
    assert notes[0].startswith(
        "reverse lookup of 10.0.0.5 takes 5.2 s on web-0, web-1, web-2 and 2 more"
    )
    assert notes[1] == "a shared lock did not come on db-1 /mnt/efs"
    assert clients.lock_trap(seen[-1:-1], 1.0) == []


def test_client_notes_make_a_healthy_verdict_a_warning_but_leave_unknown_unknown():
    from apps.lib.status import Status, Verdict

    ok = clients.with_client_notes(Verdict(Status.OK, "fine", {}), ["x"])
    assert (ok.status, ok.reason) == (Status.WARNING, "fine; NFS clients: x")
    assert (
        clients.with_client_notes(Verdict(Status.CRITICAL, "out", {}), ["x"]).status
        is Status.CRITICAL
    )
    assert (
        clients.with_client_notes(Verdict(Status.UNKNOWN, "no data", {}), ["x"]).status
        is Status.UNKNOWN
    )


TUNNELS = (
    clients.Tunnel("fs-0123abcd", 20155, "/mnt/efs"),
    clients.Tunnel("fs-4567cdef", 20313, ""),
)


@pytest.mark.parametrize(
    ("server", "port", "mountpoint", "expected"),
    [
        ("127.0.0.1", "20155", "/mnt/efs", "fs-0123abcd"),
        ("127.0.0.1", "20155", "/mnt/efs/", "fs-0123abcd"),
        ("127.0.0.1", "20155", "/mnt/other", None),  # a stale state file of another mount
        ("127.0.0.1", "20313", "/anywhere", "fs-4567cdef"),  # no mount point named: the port
        ("127.0.0.1", "20999", "/mnt/efs", None),
        ("127.0.0.1", None, "/mnt/efs", None),  # 2049: no tunnel there
        ("10.0.0.7", "20155", "/mnt/efs", None),  # only a mount of the loopback is a tunnel's
    ],
)
def test_it_ties_a_mount_through_efs_utils_tunnel_by_its_port(server, port, mountpoint, expected):
    found = clients.attribute(server, port=port, mountpoint=mountpoint, tunnels=TUNNELS)
    assert (found and found.filesystem_id) == expected
    assert found is None or found.by == "efs-utils tunnel"


def test_a_clients_operations_by_name_sum_its_mounts_and_average_their_times():
    mounts = [
        {"READ": [10, 1, 0, 50, 70], "GETATTR": [90, 0, 0, 90, 99], "SEQUENCE": [99, 0, 0, 9, 9]},
        {"READ": [30, 0, 1, 150, 170], "WRITE": [0, 0, 0, 0, 0]},
    ]
    found = clients.per_operation(mounts)
    assert [o["op"] for o in found] == ["READ", "GETATTR"]  # data first; upkeep, unused left out
    read = found[0]
    assert (read["ops"], read["retrans"], read["timeouts"]) == (40, 1, 1)
    assert (read["rtt_ms"], read["execute_ms"]) == (5.0, 6.0)
    assert clients.per_operation(mounts, limit=1) == [read]

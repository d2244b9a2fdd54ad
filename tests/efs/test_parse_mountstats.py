"""The mountstats parser on real published samples (tests/fixtures/mountstats, provenance in
each ``.expected.json``) and on what lies beyond its bounds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apps.efs import parse_mountstats as ms
from apps.efs.parse_mountstats import ParseError, digest, parse

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "mountstats"
SAMPLES = sorted(p.name.removesuffix(".txt") for p in FIXTURES.glob("*.txt"))


def load(name: str) -> tuple[str, dict]:
    text = (FIXTURES / f"{name}.txt").read_text()
    return text, json.loads((FIXTURES / f"{name}.expected.json").read_text())


@pytest.mark.parametrize("name", SAMPLES)
def test_it_reads_each_published_sample_into_its_expected_digest(name):
    text, expected = load(name)
    assert [digest(m) for m in parse(text)] == expected["expected"]["mounts"]
    assert expected["text_traits"]["bytes"] == len(text.encode())


def test_the_samples_cover_nfsv3_v40_v41_and_v42():
    versions = {m.version for name in SAMPLES for m in parse(load(name)[0])}
    assert {"3", "4.0", "4.1", "4.2"} <= versions


def test_it_reads_an_nfsv3_mount_counted_by_hand():
    (mount,) = parse(load("nfs3-rhel8")[0])
    assert (mount.server, mount.export, mount.mountpoint) == (
        "server.example.org",
        "/export/vol",
        "/mnt/bar",
    )
    assert mount.read_bytes == 695155197 and mount.write_bytes == 0  # bytes: 5th and 6th
    assert mount.option_map["timeo"] == "600" and "hard" in mount.option_map
    lookup = next(op for op in mount.ops if op.name == "LOOKUP")
    assert (lookup.ops, lookup.rtt_ms, lookup.execute_ms, lookup.errors) == (4751, 1329, 1440, 217)
    assert mount.xprt.connects == 2976


def test_it_reads_an_nfsv41_mount_counted_by_hand():
    (mount,) = parse(load("nfs41-k8s-procfs")[0])
    kinds = mount.kinds()
    # WRITE 322308 + COMMIT 12541; their RTTs 10139998 + 7179
    assert kinds["write"]["ops"] == 334849 and kinds["write"]["rtt_ms"] == 10147177
    assert kinds["read"]["ops"] == 34096
    assert mount.write_bytes == 39087991255
    assert len(mount.ops) == 63


def test_it_keeps_a_wrapped_u64_and_never_counts_negative_retransmissions():
    (mount,) = parse(load("nfs40-procfs")[0])
    access = next(op for op in mount.ops if op.name == "ACCESS")
    assert access.queue_ms == 18446743919241604546
    assert access.transmissions < access.ops and mount.kinds()["metadata"]["retrans"] == 0


def test_it_leaves_out_other_file_systems_and_reads_ipv6_servers():
    text = (
        "device /dev/sda1 mounted on / with fstype ext4\n"
        "device [fd00::5]:/export mounted on /mnt/a with fstype nfs4 statvers=1.1\n"
        "\topts:\trw,vers=4.1\n"
    )
    (mount,) = parse(text)
    assert (mount.server, mount.export, mount.version) == ("fd00::5", "/export", "4.1")
    assert mount.ops == () and mount.read_bytes is None


def test_one_mounts_bad_counter_makes_only_that_mount_unreadable():
    text = (
        "device a:/x mounted on /a with fstype nfs statvers=1.1\n"
        "\tbytes:\t1 2 3 4 5 6 7 8\n"
        "\tper-op statistics\n"
        "\t        READ: 1 1 0 1 2 3 4 x 0\n"
        "device b:/y mounted on /b with fstype nfs statvers=1.1\n"
        "\tbytes:\t1 2 3 4 50 60 7 8\n"
    )
    first, second = parse(text)
    assert "line 4" in first.error and first.read_bytes is None and first.ops == ()
    assert second.error == "" and second.read_bytes == 50


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "not a mountstats text"),
        ("hello\nworld\n", "not a mountstats text"),
        ("x" * (ms.MAX_BYTES + 1), "longer than"),
        ("device a mounted on /\n" * 2, "with fstype"),
        ("device x:/ mounted on /m with fstype ext4\n" + "\n" * ms.MAX_LINES, "lines"),
        ("device x:/ mounted on /m with fstype nfs " + "o" * ms.MAX_LINE + "\n", "characters"),
        (
            "".join(f"device s:/{i} mounted on /m{i} with fstype nfs\n" for i in range(300)),
            "NFS mounts",
        ),
    ],
)
def test_it_refuses_a_text_that_is_not_mountstats_or_beyond_a_bound(text, words):
    with pytest.raises(ParseError, match=words):
        parse(text)


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("\tbytes:\t1 2 3\n", "not 8"),
        ("\tbytes:\t1 2 3 4 5 6 7 " + "9" * 21 + "\n", "not a counter"),
        ("\tbytes:\t1 2 3 4 5 6 7 18446744073709551616\n", "beyond a 64-bit"),
        ("\txprt:\tcarrier-pigeon 1 2 3 4 5 6 7 8\n", "xprt"),
        ("\tper-op statistics\n\tREAD: 1 2\n", "not 8 or 9"),
        ("\tbytes:\t1 2 3 4 5 6 7 -8\n", "not a counter"),
        ("\tbytes:\t1 2 3 4 5 6 7 ٨\n", "not a counter"),
    ],
)
def test_it_names_the_line_of_a_mount_it_cannot_read(line, words):
    text = "device s:/e mounted on /m with fstype nfs statvers=1.1\n" + line
    (mount,) = parse(text)
    assert words in mount.error and f"line {line.count(chr(10)) + 1}" in mount.error


def test_it_refuses_more_operations_than_its_bound_in_one_mount():
    ops = "".join(f"\tOP{i}: 1 1 0 1 1 1 1 1\n" for i in range(ms.MAX_OPS + 1))
    text = "device s:/e mounted on /m with fstype nfs\n\tper-op statistics\n" + ops
    (mount,) = parse(text)
    assert f"more than {ms.MAX_OPS} operations" in mount.error

"""Where EBS meets Galera and RAID, the pure part (apps/ebs/placement.py): matching instances,
the volumes behind a RAID leg, and when the array slows."""

from __future__ import annotations

from apps.ebs.placement import (
    DEVICE_TAG,
    InstanceView,
    Placement,
    VolumeView,
    by_address,
    by_name,
    leg,
    slows,
    storage_notes,
    volumes_behind,
)


def vol(pk, device, hours=None, state="not draining", tag="", root=False, kind="gp2"):
    figures = {"credit_state": state, "hours_to_exhaustion": hours}
    tags = {DEVICE_TAG: tag} if tag else {}
    return VolumeView(pk, f"vol-{pk:x}", f"v{pk}", kind, 50, device, "ok", root, tags, figures)


A = InstanceView(1, "i-0a", "storage-a", private_ips=("10.0.2.11",))
B = InstanceView(2, "i-0b", "storage-b", private_ips=("10.0.2.12",))


def test_it_matches_an_instance_by_private_address_or_name_but_never_two():
    assert by_address("10.0.2.12", [A, B]) is B
    assert by_address("10.9.9.9", [A, B]) is None
    twin = InstanceView(3, "i-0c", "storage-b", private_ips=("10.0.2.12",))
    assert by_address("10.0.2.12", [A, B, twin]) is None
    assert by_name("storage-a", [A, B]) is A and by_name("storage-b", [A, B, twin]) is None


def test_a_member_has_the_volume_tagged_with_its_device_else_every_data_volume():
    volumes = (vol(1, "/dev/sda1", root=True), vol(2, "/dev/sdf", tag="sdb"), vol(3, "/dev/sdg"))
    assert volumes_behind("sdb", volumes) == (volumes[1],)
    assert volumes_behind("sdb1", volumes) == (volumes[1],)  # a partition of the disk
    assert volumes_behind("sdc", volumes) == volumes[1:]


def test_the_array_slows_when_the_first_volume_behind_any_leg_runs_dry():
    a = Placement(A, "Name tag storage-a", (vol(1, "/dev/sdf", tag="sdb"),))
    b = Placement(B, "Name tag storage-b", (vol(2, "/dev/sdf", 0.7, "draining", tag="sdg"),))
    legs = [
        leg("md1", [("sdb", "storage-a"), ("sdg", "storage-b")], {"storage-a": a, "storage-b": b})
    ]
    assert legs[0].first.domain == "storage-b"
    assert slows("md99", legs) == "md99 slows in ~42 min: the gp2 volumes of storage-b drain first"
    out = Placement(B, "x", (vol(2, "/dev/sdf", 0.0, "exhausted", tag="sdg"),))
    legs = [leg("md1", [("sdg", "storage-b")], {"storage-b": out})]
    assert (
        slows("md99", legs)
        == "md99 is slowed now: the gp2 volumes of storage-b are out of burst credits"
    )
    assert slows("md99", [leg("md1", [("sdb", "storage-a")], {"storage-a": a})]) is None


def test_a_nodes_notes_name_its_volume_out_of_credits_and_its_instances_bucket():
    placement = Placement(
        InstanceView(1, "i-0a", "db-1", figures={"instance_io_credit_state": "exhausted"}),
        "private address 10.0.0.1",
        (
            vol(1, "/dev/sdf", 0.0, "exhausted"),
            vol(2, "/dev/sdg", 0.5, "draining"),
            vol(3, "/dev/sdh"),
        ),
    )
    assert storage_notes(placement) == [
        "its gp2 volume v1 is out of burst credits",
        "its gp2 volume v2 runs out of burst credits in ~30 min",
        "instance db-1 (i-0a) is out of EBS I/O burst credits",
    ]

"""Where EBS meets the rest, the pure part: which EC2 instance a Galera node, a RAID host or a
storage server is (named, or matched by private address or Name tag), which volumes stand
behind a RAID leg, and when an array slows because their burst credits run out.

No Django, no I/O: ``hosts`` reads the rows and hands plain views in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from apps.lib.formats import rough_duration
from apps.raid.topology import disk_of

#: A volume tag naming the device a RAID host sees it as (an iSCSI LUN's ``sdb``): it
#: places the volume under that member exactly. Without it, all the storage server's
#: volumes but its root stand behind each of its members.
DEVICE_TAG = "vigil:device"


@dataclass(frozen=True)
class VolumeView:
    pk: int
    volume_id: str
    label: str
    volume_type: str
    size_gib: int
    device: str
    status: str
    is_root: bool = False
    tags: dict[str, str] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)

    @property
    def seconds_left(self) -> float | None:
        """Until its burst credits run out: 0 when out, None when not draining or unknown."""
        state = self.figures.get("credit_state")
        if state == "exhausted":
            return 0.0
        hours = self.figures.get("hours_to_exhaustion")
        return hours * 3600 if state == "draining" and hours is not None else None


@dataclass(frozen=True)
class InstanceView:
    pk: int
    instance_id: str
    name: str
    instance_type: str = ""
    private_ips: tuple[str, ...] = ()
    figures: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.name} ({self.instance_id})" if self.name else self.instance_id


@dataclass(frozen=True)
class Placement:
    """The instance a Vigil object stands on, how Vigil knows it, and its volumes."""

    instance: InstanceView
    how: str  # "named in Vigil", "private address 10.0.0.1", "Name tag storage-b"
    volumes: tuple[VolumeView, ...] = ()

    @property
    def first_out(self) -> VolumeView | None:
        draining = [v for v in self.volumes if v.seconds_left is not None]
        return min(draining, key=lambda v: v.seconds_left or 0.0) if draining else None


def by_address(address: str, instances: Iterable[InstanceView]) -> InstanceView | None:
    """The instance with ``address`` among its private addresses (one, or none if several)."""
    found = [i for i in instances if address and address in i.private_ips]
    return found[0] if len(found) == 1 else None


def by_name(name: str, instances: Iterable[InstanceView]) -> InstanceView | None:
    """The instance whose Name tag is ``name`` (one, or none if several)."""
    found = [i for i in instances if name and i.name == name]
    return found[0] if len(found) == 1 else None


def volumes_behind(device: str, volumes: Sequence[VolumeView]) -> tuple[VolumeView, ...]:
    """The volumes behind a member device: those tagged with it (or with its disk), else every
    volume of the storage server but its root."""
    names = {device, disk_of(device) or device}
    tagged = tuple(v for v in volumes if v.tags.get(DEVICE_TAG) in names)
    return tagged or tuple(v for v in volumes if not v.is_root)


def storage_notes(placement: Placement) -> list[str]:
    """Short texts for a reason: the node's volumes out of burst credits (or within the hour),
    and its instance's EBS burst buckets likewise."""
    notes = []
    for v in placement.volumes:
        left = v.seconds_left
        if left == 0:
            notes.append(f"its {v.volume_type} volume {v.label} is out of burst credits")
        elif left is not None and left <= 3600:
            notes.append(
                f"its {v.volume_type} volume {v.label} runs out of burst credits in {rough_duration(left)}"
            )
    f = placement.instance.figures
    for key, what in (("instance_io", "EBS I/O"), ("instance_byte", "EBS throughput")):
        if f.get(f"{key}_credit_state") == "exhausted":
            notes.append(f"instance {placement.instance.label} is out of {what} burst credits")
    return notes


@dataclass(frozen=True)
class MemberVolumes:
    device: str
    domain: str
    volumes: tuple[VolumeView, ...]

    @property
    def seconds_left(self) -> float | None:
        known = [v.seconds_left for v in self.volumes if v.seconds_left is not None]
        return min(known) if known else None

    @property
    def hours_left(self) -> float | None:
        left = self.seconds_left
        return None if left is None else left / 3600


@dataclass(frozen=True)
class Leg:
    """A mirror (or any array of devices) and the volumes behind each of its members."""

    name: str
    members: tuple[MemberVolumes, ...]

    @property
    def first(self) -> MemberVolumes | None:
        draining = [m for m in self.members if m.seconds_left is not None]
        return min(draining, key=lambda m: m.seconds_left or 0.0) if draining else None

    @property
    def seconds_left(self) -> float | None:
        first = self.first
        return None if first is None else first.seconds_left


def leg(name: str, members: Iterable[tuple[str, str]], placements: dict[str, Placement]) -> Leg:
    """``members``: (device, failure domain) of the leg; ``placements``: by domain."""
    out = []
    for device, domain in members:
        placed = placements.get(domain)
        behind = volumes_behind(device, placed.volumes) if placed else ()
        out.append(MemberVolumes(device, domain, behind))
    return Leg(name, tuple(out))


def slows(array: str, legs: Sequence[Leg]) -> str | None:
    """``md99 slows in ~40 min: the gp2 volumes of storage-b drain first``: a stripe (or a
    mirror's writes) goes at the pace of its slowest member, so the array slows when the first
    volume behind any leg runs out of burst credits. None when none is draining."""
    draining = [leg for leg in legs if leg.seconds_left is not None]
    if not draining:
        return None
    first = min(draining, key=lambda leg: leg.seconds_left or 0.0)
    member = first.first
    assert member is not None
    types = "/".join(sorted({v.volume_type for v in member.volumes if v.seconds_left is not None}))
    if not first.seconds_left:
        return f"{array} is slowed now: the {types} volumes of {member.domain} are out of burst credits"
    return (
        f"{array} slows in {rough_duration(first.seconds_left)}: the {types} volumes of "
        f"{member.domain} drain first"
    )

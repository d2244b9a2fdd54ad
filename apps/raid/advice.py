"""Replacement advice for a failed or failing member: which disk to pull, where, and how.

Pure module: no Django, no I/O. ``advise(...)`` returns, for a leaf member that md marked
failed (``(F)``, ``faulty``) or whose disk SMART calls failing, the device, its serial and
by-id name, its failure domain (the host's rules), the path up to the top array
(``md99 → md3 → sdc``), the iSCSI target and LUN when the host sent its by-path links, and the
``mdadm --manage`` commands to fail, remove and add it back, in order (``smart.FACTS
["mdadm-manage"]``). Vigil never runs them: they are text for a person.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from apps.raid.disks import LeafDisk
from apps.raid.parse_devlinks import Links

__all__ = ["Advice", "advise", "path_to_top"]

MAX_DEPTH = 8  # bounds.MAX_NESTING: arrays above a member


@dataclass(frozen=True)
class Advice:
    member: str  # the md member: "sdc" or "sdc1"
    disk: str  # the disk it is on: "sdc"
    array: str  # the array that holds it: "md3"
    why: str  # "md marked it failed", "failing SMART: pending sectors 24"
    serial: str
    model: str
    by_id: str  # the by-id name to find it by ("" when not sent)
    domain: str  # its failure domain ("" without rules)
    path: str  # "md99 → md3 → sdc"
    iscsi: str  # "target iqn.… LUN 3 at 192.0.2.11:3260", ""
    commands: tuple[str, ...]
    notes: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["commands"] = list(self.commands)
        data["notes"] = list(self.notes)
        return data


def path_to_top(member: str, array: str, parents: dict[str, str]) -> str:
    """``md99 → md3 → sdc``: the arrays from the top down to ``member``."""
    chain = [member, array]
    for _ in range(MAX_DEPTH):
        above = parents.get(chain[-1])
        if above is None or above in chain:
            break
        chain.append(above)
    return " → ".join(reversed(chain))


def advise(
    member: str,
    array: str,
    failed: bool,
    disk: LeafDisk | None,
    member_links: Links | None,
    domain: str,
    parents: dict[str, str],
    noun: str = "failure domain",
) -> Advice:
    """The advice for one member (``member_links``: the member's own by-id names, a
    partition's ending in -partN); ``failed`` when md already marked it faulty."""
    reading = disk.reading if disk is not None else None
    links = disk.links if disk is not None else None
    by_id = member_links.preferred if member_links is not None else ""
    where = f"/dev/disk/by-id/{by_id}" if by_id else f"/dev/{member}"
    iscsi = ""
    if links is not None and links.iscsi is not None:
        lun = links.iscsi
        iscsi = f"target {lun.target} LUN {lun.lun} at {lun.portal}"
    disk_name = disk.device if disk is not None else member
    commands = (
        f"mdadm --manage /dev/{array} --fail {where}",
        f"mdadm --manage /dev/{array} --remove {where}",
        f"mdadm --manage /dev/{array} --add /dev/{member}",
    )
    notes = []
    if failed:
        why = "md marked it failed"
        notes.append("md already marked it failed: --fail only confirms it")
    else:
        why = disk.health.summary if disk is not None else "failing"
        notes.append(
            "it still works: to keep the redundancy while copying, add the new disk first and "
            f"run mdadm /dev/{array} --replace {where} --with /dev/NEW instead"
        )
    serial = reading.serial if reading is not None else ""
    notes.append(_swap_note(disk_name, serial, iscsi, domain, noun))
    if member != disk_name:
        notes.append(f"{member} is a partition: partition the new disk like the other members")
    return Advice(
        member=member,
        disk=disk_name,
        array=array,
        why=why,
        serial=serial,
        model=reading.model if reading is not None else "",
        by_id=by_id,
        domain=domain,
        path=path_to_top(member, array, parents),
        iscsi=iscsi,
        commands=commands,
        notes=tuple(notes),
    )


def _swap_note(disk_name: str, serial: str, iscsi: str, domain: str, noun: str) -> str:
    """Where the disk to swap is and how to tell its successor: behind its iSCSI target, or
    by name and serial, on its failure domain (``noun`` ``domain``) or in its enclosure."""
    place = f"on {noun} {domain}" if domain else "in its enclosure"
    if iscsi:
        return (
            f"an iSCSI disk: replace the disk behind {iscsi} {place}, then rescan "
            "(iscsiadm -m session --rescan) and check the new disk's name before --add"
        )
    known_by = f" (serial {serial})" if serial else ""
    return (
        f"pull {disk_name}{known_by} {place}; the new disk may get another name: check it "
        "with lsblk -o NAME,SERIAL,WWN before --add"
    )

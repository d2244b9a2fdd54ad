"""Which md RAID-10 slots hold every copy of some chunk ("copy groups").

Pure module: no Django, no I/O. Follows ``__raid10_find_phys`` in drivers/md/raid10.c. With
``k`` raid disks, ``nc`` near copies and ``fc`` far or offset copies, chunk ``c`` starts on
slot ``d = (c * nc) mod k``; its near copies sit on ``d, d+1, .., d+nc-1`` and each of those
has its far/offset copies ``nc, 2*nc, ..`` slots further on (mod ``k``, or within its far set
when ``N devices per set`` is printed). Offset and far differ only in where on a disk a copy
sits, not on which disk, so ``o3`` over three disks puts every chunk on all three.

An array dies exactly when some chunk loses every copy, that is when the failed slots cover
a copy group. Without far sets the groups are the windows of ``nc * fc`` consecutive slots
starting every ``nc`` slots, which is also what the driver's own ``_enough()`` check walks.
"""

from __future__ import annotations

import re

__all__ = ["copy_groups", "copy_groups_cost", "raid10_copy_groups"]

_MDSTAT = re.compile(r"([0-9]{1,6}) (near|far|offset)-copies", re.ASCII)
_MDADM = re.compile(r"(near|far|offset)=([0-9]{1,6})", re.ASCII)
_SET_SIZE = re.compile(r"([0-9]{1,6}) devices per set", re.ASCII)


def raid10_copy_groups(
    raid_disks: int, near: int = 1, far: int = 1, far_set_size: int | None = None
) -> frozenset[frozenset[int]]:
    """Slot sets that each hold every copy of some chunk."""
    k = raid_disks
    set_size = min(far_set_size or k, k)
    last_set_start = (k // set_size - 1) * set_size
    last_set_size = set_size + k % set_size
    groups = set()
    for chunk in range(k):  # the start slot (chunk * near) mod k repeats within k chunks
        dev = (chunk * near) % k
        slots = set()
        for _ in range(near):
            d = dev
            slots.add(d)
            for _ in range(1, far):
                far_set = d // set_size
                d += near
                if k % set_size and d > last_set_start:
                    d = (d - last_set_start) % last_set_size + last_set_start
                else:
                    d = d % set_size + set_size * far_set
                slots.add(d)
            dev = (dev + 1) % k
        groups.add(frozenset(slots))
    return frozenset(groups)


def _copies(layout: str) -> tuple[int, int]:
    near = far = 1
    pairs = [(count, kind) for count, kind in _MDSTAT.findall(layout)]
    pairs += [(count, kind) for kind, count in _MDADM.findall(layout)]
    for count, kind in pairs:
        if kind == "near":
            near = int(count)
        else:
            far = int(count)
    return near, far


def copy_groups_cost(layout: str | None, raid_disks: int) -> int:
    """The steps ``copy_groups`` takes: one per slot of every group (``k * near * far``)."""
    near, far = _copies(layout or "")
    return max(raid_disks, 0) * max(min(near * far, raid_disks), 1)


def copy_groups(layout: str | None, raid_disks: int) -> frozenset[frozenset[int]]:
    """Copy groups from a layout as /proc/mdstat (``3 offset-copies``) or mdadm
    (``near=2``, ``offset=2``) prints it; no layout means one copy, like RAID-0."""
    layout = layout or ""
    near, far = _copies(layout)
    set_size = _SET_SIZE.search(layout)
    size = int(set_size.group(1)) if set_size else None
    if raid_disks <= 0:
        return frozenset()
    if near < 1 or far < 1 or near * far > raid_disks or size == 0:
        return frozenset({frozenset({0})})  # a layout md cannot have: lose slot 0 and it dies
    return raid10_copy_groups(raid_disks, near, far, size)

"""Read a host's ``/dev/disk/by-id`` and ``/dev/disk/by-path`` links: stable names per disk.

Pure module: no Django, no I/O. The push agent and the SSH pull send one line per link,
``/dev/disk/by-id/wwn-0x5000cca26cc73bed -> ../../sdc`` (what ``find … -printf '%p -> %l\\n'``
prints). ``parse`` returns, per kernel device name (``sdc``, ``sdc1``), its by-id names and, for
an iSCSI disk, the portal, target and LUN its by-path name holds
(``ip-192.0.2.11:3260-iscsi-iqn.2026-01.example:storage-a-lun-3``; ``smart.FACTS``). Like the
sysfs words, these are extra evidence, never needed: a line of another shape, a name with
characters udev does not write, or a target that is not a device name is left out, and nothing
here raises. At most ``MAX_LINES`` lines are read, and a device keeps at most ``MAX_NAMES``
names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MAX_LINES", "Iscsi", "Links", "parse"]

MAX_LINES = 8192
MAX_NAMES = 8
_LINE = re.compile(
    r"/dev/disk/(by-id|by-path)/([A-Za-z0-9][A-Za-z0-9._:+@=,#\\-]{0,199}) -> "
    r"(?:\.\./\.\./|/dev/)([A-Za-z0-9_-]{1,32})",
    re.ASCII,
)
_ISCSI = re.compile(
    r"ip-(?P<portal>[0-9A-Fa-f.:\[\]]{2,60}:[0-9]{1,5})-iscsi-(?P<target>[a-z0-9.:_-]{4,223})"
    r"-lun-(?P<lun>[0-9]{1,10})",
    re.ASCII,
)


@dataclass(frozen=True)
class Iscsi:
    portal: str  # "192.0.2.11:3260"
    target: str  # the target's IQN
    lun: int


@dataclass(frozen=True)
class Links:
    by_id: tuple[str, ...] = ()
    by_path: tuple[str, ...] = ()
    iscsi: Iscsi | None = None

    @property
    def preferred(self) -> str:
        """The by-id name to write in commands: a WWN first (it names the disk, not its
        bus), then the longest (model and serial), "" when there is none."""
        if not self.by_id:
            return ""
        wwn = [name for name in self.by_id if name.startswith("wwn-")]
        return (wwn or sorted(self.by_id, key=lambda n: (-len(n), n)))[0]


def parse(text: str | None) -> dict[str, Links]:
    """``{"sdc": Links(...)}`` for every device a readable line names."""
    by_id: dict[str, list[str]] = {}
    by_path: dict[str, list[str]] = {}
    for line in (text or "").split("\n", MAX_LINES)[:MAX_LINES]:
        match = _LINE.fullmatch(line.strip("\r "))
        if match is None:
            continue
        kind, name, device = match.groups()
        names = (by_id if kind == "by-id" else by_path).setdefault(device, [])
        if name not in names and len(names) < MAX_NAMES:
            names.append(name)
    found = {}
    for device in sorted(set(by_id) | set(by_path)):
        paths = tuple(sorted(by_path.get(device, ())))
        found[device] = Links(
            by_id=tuple(sorted(by_id.get(device, ()))), by_path=paths, iscsi=_iscsi(paths)
        )
    return found


def _iscsi(paths: tuple[str, ...]) -> Iscsi | None:
    for path in paths:
        match = _ISCSI.fullmatch(path)
        if match is not None:
            return Iscsi(match["portal"], match["target"], int(match["lun"]))
    return None

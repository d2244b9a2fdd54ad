"""md-RAID (apps/raid): its ``VIGIL_*`` settings (``apps.lib.appconf``)."""

from __future__ import annotations

from apps.lib.appconf import Setting, at_least
from apps.raid.disks import thresholds_from  # pure, no Django


def _disk_thresholds(value: object) -> dict:
    """Disk thresholds over the defaults (apps/raid/disks.py DiskThresholds), checked now."""
    if not isinstance(value, dict):
        raise ValueError('a JSON object, e.g. {"pending_sectors": 1, "reallocated_sectors": 10}')
    thresholds_from(value)
    return value


_disk_thresholds.kind = "JSON object"  # type: ignore[attr-defined]
_OFF_OR_MORE = at_least(0, "0 (off) or more")

SETTINGS = (
    Setting(
        "VIGIL_RAID_STALE_MINUTES",
        "int",
        15,
        help="A host with no report for this long (SSH hosts: at least 3 intervals) turns its "
        "arrays unknown.",
    ),
    Setting(
        "VIGIL_RAID_SSH_KEY",
        help="SSH pull: the client's private key (OpenSSH or PEM text), best given as "
        "VIGIL_RAID_SSH_KEY_FILE=/run/secrets/vigil_raid_key; empty: ~/.ssh/id_* and ssh-agent.",
    ),
    Setting("VIGIL_RAID_SSH_KEY_PASSPHRASE", help="The private key's passphrase, if any."),
    Setting(
        "VIGIL_RAID_SSH_KNOWN_HOSTS",
        help="known_hosts file for hosts without a key of their own; empty means "
        "~/.ssh/known_hosts. Host keys are always verified.",
    ),
    Setting(
        "VIGIL_RAID_SSH_CONNECT_TIMEOUT",
        "float",
        10.0,
        help="Seconds allowed for connecting (TCP, key exchange, login).",
    ),
    Setting(
        "VIGIL_RAID_SSH_COMMAND_TIMEOUT", "float", 30.0, help="Seconds allowed for each command."
    ),
    Setting(
        "VIGIL_RAID_DISK_THRESHOLDS",
        "json",
        {},
        _disk_thresholds,
        help="Where a SMART counter makes a disk failing, over the defaults of DiskThresholds "
        '(apps/raid/disks.py), e.g. {"reallocated_sectors": 10, "pending_sectors": 1, '
        '"temperature_c": 60}; 0 turns one off.',
    ),
    Setting(
        "VIGIL_RAID_CHECK_MAX_DAYS",
        "int",
        40,
        _OFF_OR_MORE,
        help="An array whose last check (or repair) ended longer ago than this is a warning; "
        "0: never.",
    ),
    Setting(
        "VIGIL_RAID_MISMATCH_SECTORS",
        "int",
        1,
        _OFF_OR_MORE,
        help="A check that finds this many sectors out of step (mismatch_cnt) is a warning; "
        "0: never.",
    ),
    Setting(
        "VIGIL_RAID_DISK_HISTORY_MINUTES",
        "int",
        60,
        _OFF_OR_MORE,
        help="A disk's SMART counters are kept when they change, and at least this often.",
    ),
    Setting(
        "VIGIL_RAID_DISK_RETENTION_DAYS",
        "int",
        400,
        help="Disk readings are kept this long, then expired by the beat.",
    ),
    Setting(
        "VIGIL_RAID_GONE_ARRAY_RETENTION_DAYS",
        "int",
        30,
        at_least(1),
        help="Arrays gone from /proc/mdstat (and their members) are kept this long after they "
        "were last seen, then expired by the beat like other history.",
    ),
    Setting(
        "VIGIL_RAID_MAX_ARRAYS_PER_HOST",
        "int",
        512,
        at_least(1),
        help="Arrays one host keeps, present and gone together: a report that would give it more "
        "is refused (409) and stores nothing. Twice what one report may name "
        "(apps/raid/bounds.py).",
    ),
)

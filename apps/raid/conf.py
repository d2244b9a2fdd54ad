"""md-RAID (apps/raid): its ``VIGIL_*`` settings (``apps.lib.appconf``)."""

from __future__ import annotations

from apps.lib.appconf import Setting

SETTINGS = (
    # A host with no report for this long (SSH hosts: at least 3 intervals) turns its arrays unknown.
    Setting("VIGIL_RAID_STALE_MINUTES", "int", 15),
    # SSH pull: the client's private key (OpenSSH or PEM text), best given as
    # VIGIL_RAID_SSH_KEY_FILE=/run/secrets/vigil_raid_key; empty uses ~/.ssh/id_* and ssh-agent.
    Setting("VIGIL_RAID_SSH_KEY"),
    Setting("VIGIL_RAID_SSH_KEY_PASSPHRASE"),
    # known_hosts file for hosts without a key of their own; empty means ~/.ssh/known_hosts.
    Setting("VIGIL_RAID_SSH_KNOWN_HOSTS"),
    Setting("VIGIL_RAID_SSH_CONNECT_TIMEOUT", "float", 10.0),
    Setting("VIGIL_RAID_SSH_COMMAND_TIMEOUT", "float", 30.0),
)

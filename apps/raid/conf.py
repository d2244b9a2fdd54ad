"""md-RAID (apps/raid): its ``VIGIL_*`` settings, read while the settings load.

No Django here: ``config/settings/base.py`` imports this module for every installed app that
has one, adds ``VARIABLES`` to the known variables (a typo stops the start) and the values of
``read(setting)`` to the settings. Each variable is documented in ``.env.example``.
"""

from __future__ import annotations

from collections.abc import Callable

VARIABLES = (
    "VIGIL_RAID_SSH_COMMAND_TIMEOUT",
    "VIGIL_RAID_SSH_CONNECT_TIMEOUT",
    "VIGIL_RAID_SSH_KEY",
    "VIGIL_RAID_SSH_KEY_PASSPHRASE",
    "VIGIL_RAID_SSH_KNOWN_HOSTS",
    "VIGIL_RAID_STALE_MINUTES",
)


def read(setting: Callable[..., object]) -> dict[str, object]:
    """The values, from the environment through ``setting(name, cast, default)``."""
    # A host with no report for this long (SSH hosts: at least 3 intervals) turns its arrays unknown.
    VIGIL_RAID_STALE_MINUTES = setting("VIGIL_RAID_STALE_MINUTES", "int", default=15)
    # SSH pull: the client's private key (OpenSSH or PEM text), best given as
    # VIGIL_RAID_SSH_KEY_FILE=/run/secrets/vigil_raid_key; empty uses ~/.ssh/id_* and ssh-agent.
    VIGIL_RAID_SSH_KEY = setting("VIGIL_RAID_SSH_KEY", default="")
    VIGIL_RAID_SSH_KEY_PASSPHRASE = setting("VIGIL_RAID_SSH_KEY_PASSPHRASE", default="")
    # known_hosts file for hosts without a key of their own; empty means ~/.ssh/known_hosts.
    VIGIL_RAID_SSH_KNOWN_HOSTS = setting("VIGIL_RAID_SSH_KNOWN_HOSTS", default="")
    VIGIL_RAID_SSH_CONNECT_TIMEOUT = setting(
        "VIGIL_RAID_SSH_CONNECT_TIMEOUT", "float", default=10.0
    )
    VIGIL_RAID_SSH_COMMAND_TIMEOUT = setting(
        "VIGIL_RAID_SSH_COMMAND_TIMEOUT", "float", default=30.0
    )
    values = locals()
    return {name: values[name] for name in VARIABLES}

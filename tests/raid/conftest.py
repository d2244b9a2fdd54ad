"""Fixtures for the md-RAID tests: a site with a host, and the seed's failure domains."""

from __future__ import annotations

import pytest

from apps.raid.demo import SEED_RULES


@pytest.fixture
def host(site):
    from apps.raid.models import Host

    return Host.objects.create(
        name="storage-client",
        region=site,
        domain_rules=dict(SEED_RULES),
        domain_noun="storage server",
    )


@pytest.fixture(scope="session")
def sshd():
    """A real OpenSSH server on a free loopback port, for the whole session."""
    from tests.services.sshd import Sshd

    server = Sshd().start()
    yield server
    server.stop()


@pytest.fixture
def ssh_host(host, sshd, settings):
    """The test host, collected over SSH from ``sshd`` with its host key pinned."""
    settings.VIGIL_RAID_SSH_KEY = sshd.client_key_text
    settings.VIGIL_RAID_SSH_CONNECT_TIMEOUT = 10.0
    settings.VIGIL_RAID_SSH_COMMAND_TIMEOUT = 10.0
    host.collection = host.Collection.SSH
    host.ssh_address = "127.0.0.1"
    host.ssh_port = sshd.port
    host.ssh_user = sshd.user
    host.known_hosts = sshd.known_hosts_line
    host.save()
    return host

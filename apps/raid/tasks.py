"""Celery glue: collect SSH hosts when due, and turn silent hosts unknown.

``collect_host`` is adapter (``ssh.py``) -> pure (``report.py``) -> save -> ``alerts.record``
(``collect.py``), under a lease so a host is never collected twice at once; it is safe to run
twice. ``dispatch_due(now)`` is what the beat tick calls every minute.
"""

from __future__ import annotations

import logging
from datetime import datetime

from celery import shared_task
from django.conf import settings

from apps.demo.mode import demo_enabled
from apps.lib import leases

from . import demo, ssh
from .collect import ingest, mark_silent_hosts
from .errors import ParseError
from .models import SSH_LEASE, Host

log = logging.getLogger(__name__)


def ssh_target(host: Host) -> ssh.SshTarget:
    return ssh.SshTarget(
        address=host.ssh_address,
        port=host.ssh_port,
        username=host.ssh_user,
        known_hosts=host.known_hosts,
        known_hosts_file=settings.VIGIL_RAID_SSH_KNOWN_HOSTS,
        client_key=settings.VIGIL_RAID_SSH_KEY,
        passphrase=settings.VIGIL_RAID_SSH_KEY_PASSPHRASE,
        connect_timeout=settings.VIGIL_RAID_SSH_CONNECT_TIMEOUT,
        command_timeout=settings.VIGIL_RAID_SSH_COMMAND_TIMEOUT,
        max_output=settings.VIGIL_PUSH_MAX_BYTES,
    )


@shared_task(time_limit=330, soft_time_limit=300)
def collect_host(host_id: int, region: str | None = None) -> None:
    """Pull one SSH host's report and store it; a failure is kept as the host's error."""
    with leases.lease(Host, host_id, SSH_LEASE) as held:
        if not held:
            log.info("RAID host %s is already being collected", host_id)
            return
        host = Host.objects.filter(pk=host_id, collection=Host.Collection.SSH).first()
        if host is None:
            return
        try:
            collected = ssh.collect(ssh_target(host))
            ingest(host, collected.mdstat, collected.details)
        except ssh.SshError as exc:
            log.warning("SSH collection of %s failed: %s", host, exc)
            host.collection_failed(str(exc))
            return
        except ParseError as exc:
            host.collection_failed(f"unreadable output: {exc}")
            return
        except Exception as exc:  # a bug, not the host's text: on the host page, and logged
            log.exception("Collection of RAID host %s failed", host)
            host.collection_failed(f"collection failed: {type(exc).__name__}: {exc}")
            return
        if collected.warnings:
            host.collection_failed("; ".join(collected.warnings))


@shared_task
def mark_silent() -> int:
    """Arrays of hosts that stopped reporting become unknown (one transition each)."""
    return len(mark_silent_hosts())


@shared_task
def refresh_demo() -> None:
    """Demo mode: the demo host "pushes" again, its rebuild further along."""
    for host in Host.objects.filter(is_demo=True, enabled=True):
        demo.refresh(host)


def dispatch_due(now: datetime) -> int:
    """Queue the SSH hosts that are due, the check for silent hosts, and the demo's report.

    Returns how many hosts were queued for collection, as every concern's dispatcher does."""
    hosts = Host.objects.select_related("region").in_bulk(Host.claim_due(now))
    for host in hosts.values():
        collect_host.delay(host.pk, region=host.region.code)
    if demo_enabled() and Host.objects.filter(is_demo=True).exists():
        refresh_demo.delay()
    mark_silent.delay()
    return len(hosts)

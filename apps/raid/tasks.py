"""Celery glue: collect SSH hosts when due, and turn silent hosts unknown.

``collect_host`` runs ``collect.collect_over_ssh`` (adapter ``ssh.py`` -> pure ``report.py`` ->
save -> ``alerts.record``) under a lease so a host is never collected twice at once; it is safe
to run twice. ``dispatch_due(now)`` is what the beat tick calls every minute.
"""

from __future__ import annotations

import logging
from datetime import datetime

from celery import shared_task

from apps.lib import leases

from .collect import collect_over_ssh, mark_silent_hosts
from .models import SSH_LEASE, Host

log = logging.getLogger(__name__)


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
        collect_over_ssh(host)


@shared_task
def mark_silent() -> int:
    """Arrays of hosts that stopped reporting become unknown (one transition each)."""
    return len(mark_silent_hosts())


def dispatch_due(now: datetime) -> int:
    """Queue the SSH hosts that are due and the check for silent hosts (the demo host reports
    on its own: ``demo.running_reports``).

    Returns how many hosts were queued for collection, as every concern's dispatcher does."""
    hosts = Host.objects.select_related("region").in_bulk(Host.claim_due(now))
    for host in hosts.values():
        collect_host.delay(host.pk, region=host.region.code)
    mark_silent.delay()
    return len(hosts)

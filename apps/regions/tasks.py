"""The beat tick that dispatches due work, and region discovery per account."""

from __future__ import annotations

import logging
from datetime import timedelta

from botocore.exceptions import BotoCoreError, ClientError
from celery import shared_task
from django.utils import timezone

from apps.lib import aws, leases, retention

from . import concerns, ec2
from .models import Account

log = logging.getLogger(__name__)


@shared_task
def dispatch() -> None:
    """Once a minute: queue whatever is due. Intervals live on the objects, not in beat."""
    now = timezone.now()
    for account_id in Account.claim_due_discoveries(now):
        discover_regions.delay(account_id)
    for concern in concerns.registered():
        if concern.dispatch is not None:
            concern.dispatch(now)


@shared_task(time_limit=1800, soft_time_limit=1740)
def expire_history() -> None:
    """Hourly: delete history past its retention (``apps.lib.retention``), in short batches."""
    deleted = retention.expire_all(timezone.now(), concerns.histories())
    log.info("Expired history: %s", deleted)


@shared_task(time_limit=180, soft_time_limit=150)
def discover_regions(account_id: int) -> None:
    """Refresh an account's regions and their opt-in status; record the error if AWS refuses."""
    with leases.lease(Account, account_id, timedelta(minutes=5)) as held:
        if not held:
            log.info("Discovery for account %s is already running", account_id)
            return
        account = Account.objects.get(pk=account_id)
        try:
            found = ec2.describe_regions(account.access, account.home_region)
        except (BotoCoreError, ClientError) as exc:
            message = aws.describe_error(exc)
            log.warning("Region discovery failed for %s: %s", account, message)
            account.discovery_failed(message)
            return
        account.discovery_succeeded(found)

"""A region turned back on: what happened while it was hidden is sent (routing.region_turned_on).
A silence saved with an end before the next sweep: a release is queued for its end. After a
flush, the default rule is there again. The first admin hears the default rule's alerts."""

from __future__ import annotations

from typing import Any

from django.apps import apps as django_apps
from django.db import transaction
from django.utils import timezone

from . import routing
from .models import Channel, Rule
from .tasks import wake_at_silence_end
from .transitions import wake_sender


def remember_enabled(sender: type, instance: Any, **kwargs: Any) -> None:
    """``pre_save`` of Region: was it off before this save?"""
    if instance.pk is None:
        instance._vigil_was_enabled = True
        return
    old = sender.objects.filter(pk=instance.pk).values_list("enabled", flat=True).first()
    instance._vigil_was_enabled = bool(old) if old is not None else True


def region_saved(sender: type, instance: Any, created: bool, **kwargs: Any) -> None:
    """``post_save`` of Region: turned on again, so its open incidents are sent once."""
    if created or getattr(instance, "_vigil_was_enabled", True) or not instance.enabled:
        return
    region_id = instance.pk

    def send() -> None:

        if routing.region_turned_on(region_id, timezone.now()):
            wake_sender()

    transaction.on_commit(send)


def silence_saved(sender: type, instance: Any, **kwargs: Any) -> None:
    """``post_save`` of Silence: one ending before the next sweep gets a wake-up at its end
    (those ending later are woken by the sweep that precedes their end)."""
    from datetime import timedelta

    from django.conf import settings

    now = timezone.now()
    horizon = now + timedelta(seconds=1.5 * settings.VIGIL_ALERT_SWEEP_SECONDS)
    if instance.released is not None or not now < instance.ends <= horizon:
        return
    ends = instance.ends

    def wake() -> None:
        import logging

        try:
            wake_at_silence_end(ends)
        except Exception:  # noqa: BLE001 - any broker failure; the next sweep releases it
            logging.getLogger(__name__).warning(
                "Could not queue a silence's release", exc_info=True
            )

    transaction.on_commit(wake)


DEFAULT_RULE = {"name": "Default: everything warning or worse", "min_severity": "warning"}


def ensure_default_rule(
    sender: Any, apps: Any = None, using: str = "default", **kwargs: Any
) -> None:
    """``post_migrate``: the default rule, which no one can delete. Its data migration
    (alerts.0002) makes it; a flush (``manage.py flush``, Django's transactional tests) empties
    the table and sends ``post_migrate`` again, as for the role groups
    (apps.accounts.receivers.ensure_roles). Nothing when the rules' table is not migrated yet."""
    try:
        rule = (apps or django_apps).get_model("alerts", "Rule")
    except LookupError:
        return
    if not rule.objects.using(using).filter(is_default=True).exists():
        rule.objects.using(using).create(is_default=True, **DEFAULT_RULE)


def route_to_first_admin(sender: Any, email: str, **kwargs: Any) -> None:
    """``accounts.signals.first_admin_created``: nothing goes unrouted, the default rule emails
    the first admin until someone changes it."""
    rule = Rule.objects.filter(is_default=True).first()
    if rule is not None and not rule.channels.exists():
        rule.channels.add(Channel.objects.create(name="Admin email", target=email))

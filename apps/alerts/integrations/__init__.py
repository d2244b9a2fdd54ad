"""Channel kinds, one package each (healthchecks' ``hc/integrations/<kind>/`` layout).

Every kind is a ``Transport`` in ``<kind>/transport.py``, registered here by its
``Channel.Kind``; delivery (``apps.alerts.delivery``) sends through ``TRANSPORTS`` only, so every
kind has the same outbox, leases, retries, per-recipient bookkeeping and failure kinds. A new
kind: a ``Channel.Kind`` value, a package here with its transport, one line below (its
``validate`` then checks a channel's target and secret: ``models.CHANNEL_KINDS``).
"""

from __future__ import annotations

from .base import CONFIGURATION, RECIPIENT, TRANSIENT, Transport, TransportError
from .email.transport import EmailTransport
from .pagerduty.transport import PagerDutyTransport
from .slack.transport import SlackTransport
from .webhook.transport import WebhookTransport

TRANSPORTS: dict[str, type[Transport]] = {
    t.kind: t for t in (EmailTransport, WebhookTransport, SlackTransport, PagerDutyTransport)
}

__all__ = [
    "CONFIGURATION",
    "RECIPIENT",
    "TRANSIENT",
    "TRANSPORTS",
    "Transport",
    "TransportError",
]

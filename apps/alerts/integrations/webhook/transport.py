"""Webhook: a signed JSON POST of the notifications (schema in docs/alerts.md).

``X-Vigil-Signature: sha256=<hex>`` is HMAC-SHA256 of the exact body with the channel's
secret; ``Idempotency-Key`` (and each event's ``id``) stays the same across retries, so a
receiver can drop a repeat. 2xx is delivered; 408, 429, 5xx and timeouts are retried; any other
answer, a redirect, or an address the outbound guard refuses is the receiver's failure.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Sequence

from django.conf import settings
from django.utils import timezone

from apps.alerts.integrations import http
from apps.alerts.integrations.base import Transport
from apps.alerts.integrations.events import SCHEMA_VERSION, event, event_id
from apps.alerts.models import Notification

MIN_SECRET = 16


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def idempotency_key(notifications: Sequence[Notification]) -> str:
    ids = ",".join(sorted(event_id(n) for n in notifications))
    return "vigil-" + hashlib.sha256(ids.encode()).hexdigest()[:32]


class WebhookTransport(Transport):
    kind = "webhook"

    def send(self, recipient: str, notifications: Sequence[Notification]) -> str:
        key = idempotency_key(notifications)
        events = [event(n) for n in notifications]
        body = json.dumps(
            {
                "version": SCHEMA_VERSION,
                "sent_at": timezone.now().isoformat(),
                "vigil": settings.VIGIL_BASE_URL,
                "events": events,
            },
            separators=(",", ":"),
        ).encode()
        headers = {
            "Content-Type": "application/json",
            "Idempotency-Key": key,
            "X-Vigil-Event-Ids": ",".join(e["id"] for e in events)[:4000],
            "X-Vigil-Signature": signature(self.channel.secret, body),
        }
        answer = http.post(self.channel.target.strip(), body, headers)
        http.raise_for_status(answer, "The webhook")
        return key

    @classmethod
    def validate(cls, target: str, secret: str) -> dict[str, str]:
        errors = {}
        problem = http.url_problem(target) if target.strip() else "Give the webhook's URL."
        if problem:
            errors["target"] = problem
        if len(secret) < MIN_SECRET:
            errors["secret"] = (
                f"Give a signing secret of at least {MIN_SECRET} characters "
                "(e.g. the output of `openssl rand -hex 32`)."
            )
        return errors

"""PagerDuty Events API v2: trigger while a subject is not ok, resolve when it recovers.

The ``dedup_key`` is the subject (``events.subject_key``), or the cause it failed for
(``events.cause_key``: one PagerDuty incident for a storage server's five arrays), so
PagerDuty's incident opens, is updated and closes with Vigil's. One event per key of a batch,
its latest change; a subject that also paged alone (under its own key) and recovers last,
closing its cause, resolves its own key too (``events.also_resolves``). 202 is
accepted; 400 (a wrong routing key, an invalid event) is the channel's failure; 429 and 5xx
are retried (PagerDuty asks for it). PagerDuty shows its fields as plain text: pushed text in
them is put on one line of printable characters (``content.plain``), never markup.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from django.conf import settings

from apps.alerts import content
from apps.alerts.integrations import http
from apps.alerts.integrations.base import Transport
from apps.alerts.integrations.events import also_resolves, cause_key, latest_per_subject
from apps.alerts.models import Notification

EVENTS_URL = "https://events.pagerduty.com/v2/enqueue"
SEVERITY = {"critical": "critical", "unknown": "error", "warning": "warning"}


def resolve(key: str, routing_key: str) -> dict:
    return {"routing_key": routing_key, "event_action": "resolve", "dedup_key": key}


def event(notification: Notification, routing_key: str) -> dict:
    t = notification.transition
    key = cause_key(t)
    if t.new_status == "ok":
        return resolve(key, routing_key)
    item = content.item(t)
    return {
        "routing_key": routing_key,
        "event_action": "trigger",
        "dedup_key": key,
        "payload": {
            "summary": content.summary_line(t)[:1024],
            "source": f"vigil {item['region']}",
            "severity": SEVERITY.get(t.new_status, "error"),
            "component": content.label(t),
            "group": item["concern"],
            "class": t.new_status,
            "custom_details": {"reason": content.plain(t.reason), **dict(item["figures"])}
            if not t.cause_id
            else {"cause": content.plain(t.cause.label), "subjects": content.headline(t)},
        },
        "links": [{"href": item["url"], "text": "Open in Vigil"}],
        "client": "Vigil",
        "client_url": settings.VIGIL_BASE_URL,
    }


class PagerDutyTransport(Transport):
    kind = "pagerduty"

    def send(self, recipient: str, notifications: Sequence[Notification]) -> str:
        url = self.channel.target.strip() or EVENTS_URL
        latest = {cause_key(n.transition): n for n in latest_per_subject(notifications)}
        keys = []
        for n in latest.values():
            events = [event(n, self.channel.secret)]
            events += [resolve(key, self.channel.secret) for key in also_resolves(n)]
            for body in events:
                answer = http.post(
                    url, json.dumps(body).encode(), {"Content-Type": "application/json"}
                )
                http.raise_for_status(answer, "PagerDuty")
                keys.append(body["dedup_key"])
        return ",".join(keys)

    @classmethod
    def validate(cls, target: str, secret: str) -> dict[str, str]:
        errors = {}
        if target.strip() and (problem := http.url_problem(target)):
            errors["target"] = problem
        routing_key = secret.strip()
        if not routing_key:
            errors["secret"] = "Give the integration's routing key (Events API v2)."
        elif len(routing_key) != 32 or not routing_key.isalnum():
            errors["secret"] = "A PagerDuty routing key is 32 letters and digits."
        return errors

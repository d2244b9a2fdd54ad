"""Slack through an incoming webhook: one message, a coloured attachment per subject.

The webhook URL is the credential (anyone holding it may post), so it is the channel's secret.
Slack answers 200 ``ok``; 400/403/404/410 (``invalid_payload``, ``invalid_token``,
``channel_not_found``, ``channel_is_archived``) are the channel's failure; 429 and 5xx retried.

Every text is escaped for Slack's mrkdwn (``escaped``): a reason may hold what a node pushed,
and ``<https://evil.example|Sign in again>`` or ``<!channel>`` in it would become a disguised
link or a mention of everyone. Slack asks for exactly ``&``, ``<`` and ``>`` to be replaced by
their HTML entities ("Escaping text", https://api.slack.com/reference/surfaces/formatting#escaping,
read 2026-11-26).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from apps.alerts import content
from apps.alerts.integrations import http
from apps.alerts.integrations.base import Transport
from apps.alerts.integrations.events import latest_per_subject
from apps.alerts.models import Notification

COLOURS = {"ok": "#1a7f37", "warning": "#9a6700", "critical": "#cf222e", "unknown": "#6e7781"}
MAX_ATTACHMENTS = 20  # Slack shows no more than this many well


def escaped(text: object) -> str:
    """``text`` for Slack's mrkdwn: ``&``, ``<`` and ``>`` as entities, on one line."""
    plain = content.plain(str(text))
    return plain.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def message(notifications: Sequence[Notification]) -> dict:
    ctx = content.context(notifications)
    attachments = []
    latest = latest_per_subject(notifications)
    for n in latest[:MAX_ATTACHMENTS]:
        t = n.transition
        item = content.item(t, kind=n.kind)
        attachments.append(
            {
                "color": COLOURS.get(t.new_status, COLOURS["unknown"]),
                "title": escaped(
                    f"{item['word']} {item['region']} {item['concern']} {item['label']}"
                ),
                "title_link": item["url"],
                "text": escaped(t.reason),
                "fields": [
                    {"title": escaped(name), "value": escaped(value), "short": True}
                    for name, value in item["figures"][:6]
                ],
                "fallback": escaped(content.summary_line(t, n.kind)),
            }
        )
    more = len(latest) - MAX_ATTACHMENTS
    text = escaped(ctx["subject"]) + (f" (and {more} more in Vigil)" if more > 0 else "")
    return {"text": text, "attachments": attachments}


class SlackTransport(Transport):
    kind = "slack"

    def send(self, recipient: str, notifications: Sequence[Notification]) -> str:
        body = json.dumps(message(notifications)).encode()
        answer = http.post(self.channel.secret, body, {"Content-Type": "application/json"})
        http.raise_for_status(answer, "Slack")
        return ""

    @classmethod
    def validate(cls, target: str, secret: str) -> dict[str, str]:
        if not secret.strip():
            return {"secret": "Give the Slack incoming-webhook URL (https://hooks.slack.com/…)."}
        problem = http.url_problem(secret)
        return {"secret": problem} if problem else {}

"""The email backend of ``make run``: one line per email on the terminal, and in demo mode a
copy for the "Sent messages" page, instead of every MIME part printed in full (the demo app
says when: ``register_keep_copies_when`` in its ready()).

``EMAIL_BACKEND = "apps.alerts.mailbox.OneLineBackend"`` (base.py's default; production sends
through SES, tests keep Django's locmem outbox).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from django.core.mail import EmailMessage, EmailMultiAlternatives
from django.core.mail.backends.base import BaseEmailBackend

from .models import SentMessage

log = logging.getLogger(__name__)

#: Messages kept for the page; older ones are deleted as new ones arrive.
KEEP = 200
MAX_BODY = 200_000  # characters of each part kept
#: Whether to keep a copy of each message: yes while one of these says so (demo mode).
_KEEP_COPIES_WHEN: list[Callable[[], bool]] = []


def register_keep_copies_when(keeps: Callable[[], bool]) -> None:
    """Let ``keeps()`` turn the "Sent messages" copies on (an app's ready())."""
    if keeps not in _KEEP_COPIES_WHEN:
        _KEEP_COPIES_WHEN.append(keeps)


def summary(message: EmailMessage) -> str:
    """``email to a@example.com, b@example.com: CRITICAL eu-west-1 ...``"""
    return f"email to {', '.join(message.recipients())}: {message.subject}"


def parts(message: EmailMessage) -> tuple[str, str]:
    """(text, html) of a message."""
    html = ""
    if isinstance(message, EmailMultiAlternatives):
        for content, mimetype in message.alternatives:
            if mimetype == "text/html":
                html = str(content)
    text = str(message.body or "")
    if message.content_subtype == "html":
        text, html = "", text
    return text[:MAX_BODY], html[:MAX_BODY]


class OneLineBackend(BaseEmailBackend):
    def send_messages(self, email_messages: Sequence[EmailMessage]) -> int:
        sent = 0
        for message in email_messages:
            if not message.recipients():
                continue
            log.info("%s", summary(message))  # a log line: the worker shows it as such
            if any(keeps() for keeps in _KEEP_COPIES_WHEN):
                keep(message)
            sent += 1
        return sent


def keep(message: EmailMessage) -> None:
    text, html = parts(message)
    SentMessage.objects.create(
        to=", ".join(message.recipients()), subject=str(message.subject)[:998], text=text, html=html
    )
    stale = SentMessage.objects.order_by("-created", "-pk").values_list("pk", flat=True)[KEEP:]
    SentMessage.objects.filter(pk__in=list(stale)).delete()

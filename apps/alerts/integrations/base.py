"""What every transport is: a class that sends one message about some notifications to one
recipient, and says in words what is wrong with a channel's target and secret.

A failure is a ``TransportError`` with one of three kinds (``Notification.Failure``):

- ``recipient``: this recipient will never take it (an address SES refuses, a webhook answering
  404, a redirect, a URL the outbound guard refuses): not retried, shown on the channel;
- ``configuration``: Vigil's own configuration (an unverified sender, access denied, a missing
  configuration set): retried with backoff until fixed, shown to admins on every page;
- ``transient``: throttling, 5xx, timeouts, a refused connection: retried with backoff.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from apps.alerts.models import Channel, Notification

RECIPIENT = "recipient"
CONFIGURATION = "configuration"
TRANSIENT = "transient"


class TransportError(Exception):
    def __init__(self, message: str, *, failure: str = TRANSIENT) -> None:
        super().__init__(message)
        self.message = message
        self.failure = failure

    @property
    def permanent(self) -> bool:
        return self.failure == RECIPIENT


class Transport:
    """One kind of channel. Subclasses set ``kind`` and implement ``send``."""

    kind = ""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel

    def recipients(self) -> list[str]:
        """Who is sent to, one ``send`` each; what identifies them in ``Notification.delivered``.

        One per channel for HTTP kinds (never the secret: the channel's kind stands for it)."""
        return [self.kind]

    def send(self, recipient: str, notifications: Sequence[Notification]) -> str:
        """Deliver one message about ``notifications`` to ``recipient``; return a message id."""
        raise NotImplementedError

    @classmethod
    def validate(cls, target: str, secret: str) -> dict[str, str]:
        """What is wrong with this target and secret, per field, in words (empty: nothing)."""
        return {}

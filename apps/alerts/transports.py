"""How a notification leaves Vigil. Email first; ``TRANSPORTS`` waits for a second kind."""

from __future__ import annotations

from collections.abc import Sequence

from anymail.exceptions import AnymailAPIError, AnymailRecipientsRefused
from botocore.exceptions import BotoCoreError, ClientError

from apps.lib.emails import make_message

from . import content
from .models import Channel, Notification

# SES error codes that the same message will never get past: not worth a retry.
PERMANENT_SES_ERRORS = {
    "MessageRejected",
    "MailFromDomainNotVerifiedException",
    "MailFromDomainNotVerified",
    "InvalidParameterValue",
    "BadRequestException",
    "NotFoundException",
    "AccountSuspendedException",
}


class TransportError(Exception):
    def __init__(self, message: str, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.permanent = permanent


class Transport:
    def __init__(self, channel: Channel) -> None:
        self.channel = channel

    def notify(self, notifications: Sequence[Notification]) -> str:
        """Deliver one message about ``notifications``; return the provider's message id."""
        raise NotImplementedError


class EmailTransport(Transport):
    def notify(self, notifications: Sequence[Notification]) -> str:
        recipients = self.channel.recipients
        if not recipients:
            raise TransportError("The channel has no email address", permanent=True)
        message = make_message("alert", recipients, content.context(notifications))
        try:
            message.send()
        except AnymailRecipientsRefused as exc:
            raise TransportError(f"Recipients refused: {exc}", permanent=True) from exc
        except AnymailAPIError as exc:
            raise classify(exc.__cause__ or exc) from exc
        except (ClientError, BotoCoreError, OSError) as exc:
            raise classify(exc) from exc
        status = getattr(message, "anymail_status", None)
        return (status.message_id or "") if status and isinstance(status.message_id, str) else ""


def classify(exc: BaseException) -> TransportError:
    """Throttling, 5xx and timeouts are worth retrying; a rejected message is not."""
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = error.get("Code", "")
        text = f"{code}: {error.get('Message', '')}".strip(": ")
        return TransportError(text, permanent=code in PERMANENT_SES_ERRORS)
    return TransportError(f"{type(exc).__name__}: {exc}", permanent=False)


TRANSPORTS: dict[str, type[Transport]] = {Channel.Kind.EMAIL: EmailTransport}

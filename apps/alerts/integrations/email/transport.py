"""Email through Django's mail API (Amazon SES through django-anymail in production).

One message per recipient, so an address SES refuses fails alone and a retry skips those who
already have it. SES's error codes decide the failure kind.
"""

from __future__ import annotations

from collections.abc import Sequence

from anymail.exceptions import (
    AnymailAPIError,
    AnymailConfigurationError,
    AnymailInvalidAddress,
    AnymailRecipientsRefused,
)
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError
from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from apps.alerts import content
from apps.alerts.integrations.base import (
    CONFIGURATION,
    RECIPIENT,
    TRANSIENT,
    Transport,
    TransportError,
)
from apps.alerts.models import Notification
from apps.lib.emails import make_message

# SES refuses because of how Vigil is set up: the sender, the account, the keys, the
# configuration set. Fixed by an admin, then the same message goes through: retried.
CONFIGURATION_ERRORS = {
    "MessageRejected",  # the sender (or, in the sandbox, a recipient) is not verified
    "MailFromDomainNotVerified",
    "MailFromDomainNotVerifiedException",
    "AccessDenied",
    "AccessDeniedException",
    "ConfigurationSetDoesNotExist",
    "ConfigurationSetDoesNotExistException",
    "NotFoundException",  # SES v2: the configuration set (or identity) does not exist
    "AccountSuspendedException",
    "SendingPausedException",
    "AccountSendingPausedException",
    "InvalidClientTokenId",
    "UnrecognizedClientException",
    "SignatureDoesNotMatch",
    "ExpiredToken",
    "ExpiredTokenException",
}
# SES refuses this recipient's address: another try will not change that.
RECIPIENT_ERRORS = {"InvalidParameterValue", "BadRequestException", "ValidationError"}


def address_problems(target: str) -> list[str]:
    """Each address of a comma-separated list that is not an email address, in words."""
    problems = []
    for address in (a.strip() for a in target.replace(";", ",").split(",")):
        if not address:
            continue
        try:
            validate_email(address)
        except ValidationError:
            problems.append(f"{address!r} is not an email address")
    return problems


def classify(exc: BaseException, recipient: str) -> TransportError:
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = error.get("Code", "")
        text = f"{code}: {error.get('Message', '')}".strip(": ")
        if code in CONFIGURATION_ERRORS:
            return TransportError(text, failure=CONFIGURATION)
        if code in RECIPIENT_ERRORS:
            return TransportError(f"{recipient}: {text}", failure=RECIPIENT)
        return TransportError(text, failure=TRANSIENT)
    if isinstance(exc, NoCredentialsError | AnymailConfigurationError):
        return TransportError(f"{type(exc).__name__}: {exc}", failure=CONFIGURATION)
    return TransportError(f"{type(exc).__name__}: {exc}", failure=TRANSIENT)


class EmailTransport(Transport):
    kind = "email"

    def recipients(self) -> list[str]:
        return self.channel.recipients

    def send(self, recipient: str, notifications: Sequence[Notification]) -> str:
        # The same notifications for each recipient of a batch: render their context once.
        key = tuple(n.pk for n in notifications)
        cached = getattr(self, "_context", None)
        if cached is None or cached[0] != key:
            cached = self._context = (key, content.context(notifications))
        message = make_message("notification", [recipient], cached[1])
        try:
            message.send()
        except (AnymailRecipientsRefused, AnymailInvalidAddress) as exc:
            first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise TransportError(f"{recipient}: {first_line}", failure=RECIPIENT) from exc
        except AnymailAPIError as exc:
            raise classify(exc.__cause__ or exc, recipient) from exc
        except (ClientError, BotoCoreError, AnymailConfigurationError, OSError) as exc:
            raise classify(exc, recipient) from exc
        status = getattr(message, "anymail_status", None)
        return (status.message_id or "") if status and isinstance(status.message_id, str) else ""

    @classmethod
    def validate(cls, target: str, secret: str) -> dict[str, str]:
        errors = {}
        if not target.strip():
            errors["target"] = "Give at least one email address."
        elif problems := address_problems(target):
            errors["target"] = "; ".join(problems) + "."
        return errors

"""A channel's "Send a test": one message through the channel's own transport, now, as an alert
would go (the same format, signature, guard and timeouts), about the channel itself and saying
nothing changed. Nothing is written: no transition, no notification, no change of the channel's
last success or error; the page shows what each recipient answered.

PagerDuty gets a resolve event for the channel's own key, which PagerDuty accepts (202) when the
routing key is valid and which pages nobody.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.contenttypes.models import ContentType
from django.utils import timezone

from apps.regions.models import Region

from .integrations import TRANSPORTS, TransportError
from .models import Channel, Notification, Transition


@dataclass(frozen=True)
class Answer:
    recipient: str
    error: str = ""  # empty: delivered


def test_message(channel: Channel, sent_by: str) -> Notification:
    """The unsaved notification a test sends: a channel's own "transition", ok to ok."""
    now = timezone.now()
    transition = Transition(
        region=Region(code="vigil", name="Vigil"),
        content_type=ContentType.objects.get_for_model(Channel),
        object_id=channel.pk,
        concern="",
        subject_label=channel.name,
        old_status="ok",
        new_status="ok",
        reason=f"a test message sent by {sent_by}, nothing changed",
        created=now,
    )
    return Notification(
        transition=transition, channel=channel, kind=Notification.Kind.TEST, created=now
    )


def send_test(channel: Channel, sent_by: str) -> list[Answer]:
    """Send the test to every recipient of ``channel``; what each answered."""
    transport = TRANSPORTS[channel.kind](channel)
    message = test_message(channel, sent_by)
    answers = []
    for recipient in transport.recipients():
        try:
            transport.send(recipient, [message])
        except TransportError as exc:
            answers.append(Answer(recipient, exc.message))
        else:
            answers.append(Answer(recipient))
    return answers

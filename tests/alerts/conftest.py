from __future__ import annotations

import pytest

from apps.alerts.models import Channel, Rule
from apps.regions.models import Region
from tests.concern_app.models import Gadget


@pytest.fixture
def region(db):
    return Region.objects.create(kind=Region.Kind.SITE, code="lab", name="Lab")


@pytest.fixture
def gadget(region):
    return Gadget.objects.create(region=region, name="g1")


@pytest.fixture
def oncall(db):
    """The default rule emails the on-call channel."""
    channel = Channel.objects.create(name="On call", target="oncall@example.com")
    # Transactional tests flush the data migration's default rule; make sure it is there.
    rule, _ = Rule.objects.get_or_create(is_default=True, defaults={"name": "Default"})
    rule.channels.add(channel)
    return channel


@pytest.fixture
def make_gadgets(region):
    def make(n: int) -> list[Gadget]:
        return [Gadget.objects.create(region=region, name=f"g{i:02d}") for i in range(n)]

    return make


@pytest.fixture(autouse=True)
def no_hold(settings):
    """Send each change at once: these tests call send_due() back to back on purpose.

    The hold between two emails of one region is tested on its own and with a real worker.
    """
    settings.VIGIL_ALERT_HOLD_SECONDS = 0
    settings.VIGIL_ALERT_REPEAT_HOLD_SECONDS = 0


@pytest.fixture
def receiver():
    from tests.services.receiver import Receiver

    server = Receiver()
    yield server
    server.close()


@pytest.fixture
def make_channel(db):
    """A channel of any kind, routed by the default rule, saved as the page would (validated)."""

    def make(kind: str, target: str = "", secret: str = "", name: str = "") -> Channel:
        channel = Channel(name=name or kind, kind=kind, target=target, secret=secret)
        channel.full_clean()
        channel.save()
        rule, _ = Rule.objects.get_or_create(is_default=True, defaults={"name": "Default"})
        rule.channels.add(channel)
        return channel

    return make


@pytest.fixture
def ses(aws, settings):
    """Django's mail API sends through anymail's SES backend to moto, via the fault proxy."""
    from tests.services.ses_proxy import SENDER, SesFaultProxy

    proxy = SesFaultProxy(aws)
    settings.EMAIL_BACKEND = "apps.alerts.integrations.email.ses.EmailBackend"
    settings.DEFAULT_FROM_EMAIL = SENDER
    settings.ANYMAIL = {
        "AMAZON_SES_CLIENT_PARAMS": {
            "endpoint_url": proxy.url,
            "region_name": "us-east-1",
            "config": {"retries": {"total_max_attempts": 1}},
        }
    }
    yield proxy
    proxy.close()


@pytest.fixture
def ses_verified(ses, aws):
    from tests.services.ses_proxy import verify_sender

    verify_sender(aws)
    return ses

"""An incident by cause through a real worker to real receivers on loopback.

The demo's RAID host (RAID-0 over five RAID-10s, each with a leg on each of three storage
servers) loses storage-b: five arrays degrade (and the stack on them), and one webhook message
and one PagerDuty-style event name the server and the arrays; the server back, one resolve
closes it. The report goes in as the push endpoint and the SSH collection store it
(``raid.collect.ingest``); the transitions' own wake-ups reach the worker through Redis.
"""

from __future__ import annotations

import pytest

from apps.alerts.models import Cause, Channel, Rule
from apps.raid.collect import ingest
from apps.raid.demo import SEED_ARRAYS, SEED_RULES, seed_layout_mdstat
from apps.raid.models import Host
from apps.regions.models import Region
from tests.services import wait_for
from tests.services.receiver import Receiver
from tests.services.workers import Worker, publishing_to, worker_env

pytestmark = pytest.mark.django_db(transaction=True)

ROUTING_KEY = "Causeroutingkey0123456789abcdefA"
STORAGE_B = [disks[1] for disks in SEED_ARRAYS.values()]
WAIT_S = 60


def channel(**fields) -> Channel:
    made = Channel(**fields)
    made.full_clean()
    made.save()
    return made


def test_one_storage_server_gone_is_one_webhook_message_and_one_pagerduty_incident(redis, tmp_path):
    webhook, pagerduty = Receiver(), Receiver(accepted=202)
    env = worker_env(
        redis.url,
        "http://127.0.0.1:9",  # no AWS here
        VIGIL_OUTBOUND_ALLOW_LOOPBACK="true",
        VIGIL_ALERT_HOLD_SECONDS="0",
        VIGIL_ALERT_REPEAT_HOLD_SECONDS="0",
    )
    worker = Worker(env, tmp_path / "worker.log")
    try:
        site = Region.objects.create(kind=Region.Kind.SITE, code="lab", name="Lab")
        host = Host.objects.create(
            name="storage-client", region=site, domain_rules=dict(SEED_RULES),
            domain_noun="storage server",
        )  # fmt: skip
        rule, _ = Rule.objects.get_or_create(is_default=True, defaults={"name": "Default"})
        rule.channels.add(
            channel(name="hook", kind="webhook", target=webhook.url + "/hook", secret="s" * 32),
            channel(
                name="pager", kind="pagerduty", target=pagerduty.url + "/v2/enqueue",
                secret=ROUTING_KEY,
            ),
        )  # fmt: skip
        worker.start()
        with publishing_to(redis):
            ingest(host, seed_layout_mdstat())  # first report: ok, nothing to send
            ingest(host, seed_layout_mdstat(failed=STORAGE_B))
        wait_for(lambda: webhook.requests and pagerduty.requests, WAIT_S, "the two alerts")

        cause = Cause.objects.get()
        assert cause.label == "storage server storage-b"
        (message,) = webhook.requests
        (event,) = message.json["events"]
        assert event["cause"]["label"] == "storage server storage-b"
        listed = {s["label"] for s in event["cause"]["subjects"]}
        assert {f"storage-client:md{n}" for n in range(1, 6)} <= listed
        (trigger,) = pagerduty.requests
        assert trigger.json["event_action"] == "trigger"
        assert trigger.json["dedup_key"] == f"vigil/cause/{cause.key}"
        summary = trigger.json["payload"]["summary"]
        assert "storage server storage-b" in summary
        assert all(f"storage-client:md{n}" in summary for n in range(1, 6))

        with publishing_to(redis):
            ingest(host, seed_layout_mdstat())  # storage-b is back
        wait_for(lambda: len(pagerduty.requests) == 2, WAIT_S, "the resolve")
        resolve = pagerduty.requests[1].json
        assert resolve == {
            "routing_key": ROUTING_KEY, "event_action": "resolve",
            "dedup_key": f"vigil/cause/{cause.key}",
        }  # fmt: skip
        wait_for(lambda: len(webhook.requests) == 2, WAIT_S, "the webhook's recovery")
        (recovery,) = webhook.requests[1].json["events"]
        assert recovery["status"] == "ok" and recovery["cause"]["closed"]
        cause.refresh_from_db()
        assert cause.closed is not None
        assert len(pagerduty.requests) == 2 and len(webhook.requests) == 2
    finally:
        worker.stop()
        webhook.close()
        pagerduty.close()

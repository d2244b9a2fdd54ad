"""A declared dependency through a real worker to a real webhook receiver on loopback.

Two hosts' arrays: every array of ``app-client`` is declared to depend on ``storage``'s md99.
``storage`` loses two disks (hosts without failure-domain rules: no cause Vigil knows) and is
sent; ``app-client`` then degrades too and is held back (inhibited) on storage's incident;
storage recovers: its recovery and app-client's arrays still failing are sent; app-client
recovers and hears it.
"""

from __future__ import annotations

import pytest
from django.contrib.contenttypes.models import ContentType

from apps.alerts.models import Cause, Channel, Dependency, Notification, Rule
from apps.raid.collect import ingest
from apps.raid.demo import seed_layout_mdstat
from apps.raid.models import Array, Host
from apps.regions.models import Region
from tests.services import wait_for
from tests.services.receiver import Receiver
from tests.services.workers import Worker, publishing_to, worker_env

pytestmark = pytest.mark.django_db(transaction=True)

WAIT_S = 60
TWO_SERVERS = ["sdb", "sdg"]  # md1 loses its storage-a and storage-b legs


def events(webhook: Receiver) -> list[tuple[str, str]]:
    return [
        (e["subject"]["label"], e["status"]) for r in webhook.requests for e in r.json["events"]
    ]


def test_a_dependent_is_held_on_its_upstream_incident_and_sent_at_its_recovery(redis, tmp_path):
    webhook = Receiver()
    env = worker_env(
        redis.url,
        "http://127.0.0.1:9",
        VIGIL_OUTBOUND_ALLOW_LOOPBACK="true",
        VIGIL_ALERT_HOLD_SECONDS="0",
        VIGIL_ALERT_REPEAT_HOLD_SECONDS="0",
    )
    worker = Worker(env, tmp_path / "worker.log")
    try:
        site = Region.objects.create(kind=Region.Kind.SITE, code="lab", name="Lab")
        storage = Host.objects.create(name="storage", region=site)
        app = Host.objects.create(name="app-client", region=site)
        hook = Channel(name="hook", kind="webhook", target=webhook.url + "/hook", secret="s" * 32)
        hook.full_clean()
        hook.save()
        rule, _ = Rule.objects.get_or_create(is_default=True, defaults={"name": "Default"})
        rule.channels.add(hook)
        worker.start()
        with publishing_to(redis):
            ingest(storage, seed_layout_mdstat())
            ingest(app, seed_layout_mdstat())
            kind = ContentType.objects.get_for_model(Array).pk
            upstream = Array.objects.get(host=storage, name="md99")
            for array in Array.objects.filter(host=app):
                Dependency.objects.create(
                    content_type_id=kind, object_id=array.pk,
                    upstream_type_id=kind, upstream_id=upstream.pk,
                )  # fmt: skip
            ingest(storage, seed_layout_mdstat(failed=TWO_SERVERS))
            wait_for(lambda: ("storage:md99", "warning") in events(webhook) or
                     ("storage:md99", "critical") in events(webhook), WAIT_S, "storage's alert")  # fmt: skip
            ingest(app, seed_layout_mdstat(failed=TWO_SERVERS))
            held = Notification.objects.filter(transition__subject_label__startswith="app-client")
            assert held.exists()
            assert {n.state for n in held} == {Notification.State.INHIBITED}
            (cause,) = Cause.objects.filter(closed=None)
            assert cause.label == "storage:md99 (declared dependency)"

            ingest(storage, seed_layout_mdstat())  # storage back: app-client's arrays still fail
            wait_for(
                lambda: (
                    ("storage:md99", "ok") in events(webhook)
                    and any(label == "app-client:md99" for label, _ in events(webhook))
                ),
                WAIT_S,
                "storage's recovery and app-client's failure",
            )
            cause.refresh_from_db()
            assert cause.closed is not None
            ingest(app, seed_layout_mdstat())
            wait_for(lambda: ("app-client:md99", "ok") in events(webhook), WAIT_S, "its recovery")
        sent = [label for label, status in events(webhook) if status != "ok"]
        assert sent.count("app-client:md99") == 1  # once: at storage's recovery, never before
    finally:
        worker.stop()
        webhook.close()

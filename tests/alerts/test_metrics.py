"""/metrics' on-call families: open incidents by cause, escalations still to climb, maintenance
windows open now (labels concern and region only)."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import time_machine
from prometheus_client.parser import text_string_to_metric_families

from apps import alerts
from apps.alerts.models import Channel, EscalationPolicy, MaintenanceWindow, Rule
from apps.lib.status import Cause, Status, Verdict
from apps.prometheus.collector import render

SWITCH = Cause("lab/switch-1", "switch switch-1")


def scrape() -> dict[str, list[tuple[dict, float]]]:
    body, _ = render()
    return {
        f.name: [(s.labels, s.value) for s in f.samples]
        for f in text_string_to_metric_families(body.decode())
        if f.name.startswith("vigil_alert_") and f.samples
    }


def test_open_causes_pending_escalations_and_open_windows(settings, region, make_gadgets, oncall):
    settings.VIGIL_METRICS_CACHE_SECONDS = 0
    assert scrape() == {"vigil_alert_maintenance_windows_open": [({}, 0.0)]}

    policy = EscalationPolicy.objects.create(name="Critical")
    policy.levels.create(delay_minutes=0).channels.add(oncall)
    policy.levels.create(delay_minutes=10).channels.add(
        Channel.objects.create(name="Lead", target="lead@example.com")
    )
    Rule.objects.create(name="Critical", min_severity="critical", escalation=policy)
    a, b, c = make_gadgets(3)
    alerts.record(a, Verdict(Status.CRITICAL, "down", cause=SWITCH))
    alerts.record(b, Verdict(Status.CRITICAL, "down", cause=SWITCH))
    alerts.record(c, Verdict(Status.CRITICAL, "quorum lost"))
    labels = {"concern": "gadgets", "region": "lab"}
    got = scrape()
    assert got["vigil_alert_causes_open"] == [(labels, 1.0)]
    assert got["vigil_alert_cause_subjects_open"] == [(labels, 2.0)]
    # b is held on the cause's incident: a's climbs for both
    assert got["vigil_alert_escalations_pending"] == [(labels, 2.0)]

    alerts.record(a, Verdict(Status.OK, "back"))
    alerts.record(b, Verdict(Status.OK, "back"))
    got = scrape()
    assert "vigil_alert_causes_open" not in got
    assert got["vigil_alert_escalations_pending"] == [(labels, 1.0)]

    monday_noon = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
    MaintenanceWindow.objects.create(
        name="Patch", days=[0], start=time(11, 30), minutes=60, time_zone="UTC"
    )
    MaintenanceWindow.objects.create(
        name="Off", days=[0], start=time(11, 30), minutes=60, time_zone="UTC", enabled=False
    )
    with time_machine.travel(monday_noon, tick=False):
        assert scrape()["vigil_alert_maintenance_windows_open"] == [({}, 1.0)]
    with time_machine.travel(monday_noon + timedelta(hours=1), tick=False):
        assert scrape()["vigil_alert_maintenance_windows_open"] == [({}, 0.0)]

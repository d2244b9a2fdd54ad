from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.utils import timezone

from apps import alerts
from apps.alerts import delivery, routing
from apps.alerts.models import Channel, Incident, Notification, Rule, Silence
from apps.lib.status import Status, Verdict

pytestmark = pytest.mark.django_db

CRITICAL = Verdict(
    Status.CRITICAL, "burst credits exhausted; throughput capped", {"credits_bytes": 0}
)
OK = Verdict(Status.OK, "credits are building up")


def test_it_emails_a_status_change_with_a_subject_that_reads_on_a_phone(gadget, oncall):
    alerts.record(gadget, CRITICAL)
    assert delivery.send_due() == 1
    (message,) = mail.outbox
    assert message.subject == "CRITICAL lab Gadgets gadget g1: burst credits exhausted"
    assert message.to == ["oncall@example.com"]
    assert "burst credits exhausted; throughput capped" in message.body
    assert "credits: 0 B" in message.body  # units from the figure key, credits_bytes
    assert f"/gadgets/{gadget.pk}/" in message.body  # the subject's page
    html = message.alternatives[0][0]
    assert "Open in Vigil" in html
    assert Notification.objects.get().state == "sent"
    oncall.refresh_from_db()
    assert oncall.last_success is not None


def test_it_sends_the_recovery_where_the_problem_went(gadget, oncall):
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    alerts.record(gadget, OK)
    delivery.send_due()
    assert mail.outbox[-1].subject == "RECOVERED lab Gadgets gadget g1: credits are building up"
    assert Incident.objects.get().closed is not None


def test_a_first_check_that_finds_a_subject_ok_sends_nothing(gadget, oncall):
    alerts.record(gadget, OK)  # unknown (never collected) -> ok
    delivery.send_due()
    assert mail.outbox == []
    assert not Notification.objects.exists()


def test_a_recovery_follows_only_an_alert_that_was_sent(gadget, oncall):
    Rule.objects.filter(is_default=True).update(min_severity="critical")
    for verdict in (Verdict(Status.WARNING, "a bit warm"), OK, CRITICAL, OK):
        alerts.record(gadget, verdict)  # the warning is below the rule: never sent
        delivery.send_due()
    assert [m.subject.split()[0] for m in mail.outbox] == ["CRITICAL", "RECOVERED"]


def test_it_sends_each_notification_once(gadget, oncall):
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    delivery.send_due()
    assert len(mail.outbox) == 1


def test_it_routes_by_region_and_concern_before_the_default_rule(gadget, oncall, region):
    storage = Channel.objects.create(name="Storage team", target="storage@example.com")
    rule = Rule.objects.create(name="lab gadgets", region=region, concern="gadgets")
    rule.channels.add(storage)
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    assert [m.to for m in mail.outbox] == [["storage@example.com"]]


def test_it_ignores_a_warning_below_a_rules_minimum_severity(gadget, oncall):
    Rule.objects.filter(is_default=True).update(min_severity="critical")
    alerts.record(gadget, Verdict(Status.WARNING, "a bit warm"))
    delivery.send_due()
    assert mail.outbox == []


def test_it_holds_back_alerts_during_a_silence(gadget, oncall, region, user):
    Silence.objects.create(region=region, ends=timezone.now() + timedelta(hours=1), author=user)
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    assert mail.outbox == []
    assert Notification.objects.get().state == "silenced"


def test_it_reminds_while_an_incident_lasts_and_stops_when_acknowledged(gadget, oncall, user):
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    with time_machine.travel(timezone.now() + timedelta(hours=4, minutes=1)):
        assert routing.queue_reminders(timezone.now()) == 1
        delivery.send_due()
    assert mail.outbox[-1].subject.startswith("STILL CRITICAL lab Gadgets gadget g1")
    Incident.objects.update(acknowledged=timezone.now(), acknowledged_by=user)
    with time_machine.travel(timezone.now() + timedelta(hours=9)):
        assert routing.queue_reminders(timezone.now()) == 0


def test_it_groups_many_subjects_of_one_region_into_one_email(make_gadgets, oncall):
    for gadget in make_gadgets(12):
        alerts.record(gadget, CRITICAL)
    assert delivery.send_due() == 1
    (message,) = mail.outbox
    assert message.subject == (
        "12 changes in lab: CRITICAL Gadgets gadget g00, CRITICAL Gadgets gadget g01, "
        "CRITICAL Gadgets gadget g02 and 9 more"
    )
    assert message.body.count("CRITICAL · lab") == 12
    assert Notification.objects.filter(state="sent").count() == 12


def test_it_summarises_a_flapping_subject_instead_of_sending_every_change(gadget, oncall):
    verdicts = [CRITICAL, OK] * 10
    for verdict in verdicts:
        alerts.record(gadget, verdict)
        delivery.send_due()
    subjects = [m.subject for m in mail.outbox]
    assert len(subjects) == 6  # five changes, then one summary
    assert subjects[-1].startswith("FLAPPING lab Gadgets gadget g1: 6 changes in 30 min")
    assert Notification.objects.filter(state="suppressed").count() == 14

    # Once it has stayed put for the settle time, where it ended up is sent, once.
    assert routing.release_settled(timezone.now() + timedelta(minutes=9)) == 0
    with time_machine.travel(timezone.now() + timedelta(minutes=11)):
        assert routing.release_settled(timezone.now()) == 1
        delivery.send_due()
        assert routing.release_settled(timezone.now()) == 0
    assert len(mail.outbox) == 7
    assert mail.outbox[-1].subject == "RECOVERED lab Gadgets gadget g1: credits are building up"


def test_it_claims_a_notification_again_after_its_lease_expires(gadget, oncall):
    alerts.record(gadget, CRITICAL)
    claimed = delivery.claim_batch()  # a worker claims it, then dies without sending
    assert len(claimed) == 1 and delivery.claim_batch() == []
    with time_machine.travel(timezone.now() + timedelta(minutes=3)):
        assert delivery.send_due() == 1
    assert len(mail.outbox) == 1
    notification = Notification.objects.get()
    assert notification.state == "sent" and notification.attempts == 2


def test_a_worker_whose_lease_expired_cannot_overwrite_the_outcome(gadget, oncall):
    alerts.record(gadget, CRITICAL)
    stale = delivery.claim_batch()
    with time_machine.travel(timezone.now() + timedelta(minutes=3)):
        delivery.send_due()
    assert delivery._finish(stale, state="failed") == 0
    assert Notification.objects.get().state == "sent"


def test_it_shows_a_channel_without_address_as_failing_and_does_not_retry(gadget):
    broken = Channel.objects.create(name="Nobody", target=" ")
    Rule.objects.get(is_default=True).channels.add(broken)
    alerts.record(gadget, CRITICAL)
    delivery.send_due()
    broken.refresh_from_db()
    assert broken.last_error == "The channel has no email address"
    assert Notification.objects.get().state == "failed"


def test_it_keeps_the_history_of_a_hidden_region_but_pages_nobody(gadget, oncall, region):
    region.enabled = False
    region.save()
    assert alerts.record(gadget, CRITICAL) is not None
    delivery.send_due()
    assert mail.outbox == [] and not Notification.objects.exists()


def test_it_holds_a_regions_next_email_and_lists_each_subject_once(make_gadgets, oncall, settings):
    settings.VIGIL_ALERT_HOLD_SECONDS = 5
    first, second, third = make_gadgets(3)
    # The clock stands still, so a slow machine cannot eat into the five seconds it measures.
    with time_machine.travel(timezone.now(), tick=False):
        alerts.record(first, CRITICAL)
        assert delivery.send_due() == 1  # a lone alert goes at once
        alerts.record(second, CRITICAL)
        alerts.record(third, CRITICAL)
        alerts.record(second, OK)
        assert delivery.send_due() == 0  # held: the region had an email a moment ago
        release, _ = delivery.next_release()
        assert (release - timezone.now()).total_seconds() == 5

    delivery.deliver(delivery.claim_batch(now=release + timedelta(milliseconds=1)))
    assert len(mail.outbox) == 2
    held = mail.outbox[1]
    assert held.subject == (
        "2 changes in lab: RECOVERED Gadgets gadget g01, CRITICAL Gadgets gadget g02"
    )
    assert "Changed 2 times: was unknown, now ok" in held.body
    assert Notification.objects.filter(state="sent").count() == 4


def test_the_same_subjects_changing_again_wait_longer_than_news(make_gadgets, oncall, settings):
    settings.VIGIL_ALERT_HOLD_SECONDS = 1
    settings.VIGIL_ALERT_REPEAT_HOLD_SECONDS = 30
    flappy, other = make_gadgets(2)
    with time_machine.travel(timezone.now(), tick=False):  # a slow machine spends no hold time
        alerts.record(flappy, CRITICAL)
        delivery.send_due()
        alerts.record(flappy, OK)  # the channel heard of it a moment ago: no news
        sent = Notification.objects.get(state="sent").sent
        assert delivery.claim_batch(now=sent + timedelta(seconds=2)) == []
        later = delivery.next_release(now=sent + timedelta(seconds=2))[0]
        assert later == sent + timedelta(seconds=30)

        alerts.record(other, CRITICAL)  # news: sent once the short hold is over, with the repeat
        batch = delivery.claim_batch(now=sent + timedelta(seconds=2))
    assert sorted(n.transition.subject_label for n in batch) == ["gadget g00", "gadget g01"]


def test_it_writes_each_figure_in_the_unit_its_key_names():
    from apps.alerts.content import figure

    assert figure("credit_balance_bytes", 0) == ("credit balance", "0 B")
    assert figure("credits_drained_bytes", 1.2 * 2**40) == ("credits drained", "1.2 TiB")
    assert figure("permitted_mibps", 5.0) == ("permitted", "5 MiB/s")
    assert figure("io_limit_pct", 84.2) == ("io limit", "84 %")
    assert figure("idle_timeout_s", 60.0) == ("idle timeout", "60 s")
    assert figure("hours_to_exhaustion", 9.25) == ("to exhaustion", "9.25 h")
    assert figure("last_data_at", "2026-11-23T10:00:00+00:00") == (
        "last data at",
        "2026-11-23 10:00 UTC",
    )
    assert figure("throughput_mode", "bursting") == ("throughput mode", "bursting")


def test_a_recovery_reaches_every_channel_told_of_the_incident(gadget, oncall):
    pager = Channel.objects.create(name="Pager", target="pager@example.com")
    Rule.objects.create(name="critical only", min_severity="critical").channels.add(pager)
    alerts.record(gadget, CRITICAL)  # pager and... the critical rule matches: pager only
    delivery.send_due()
    alerts.record(gadget, Verdict(Status.WARNING, "a bit warm"))  # old critical: pager again
    delivery.send_due()
    alerts.record(gadget, OK)  # warning -> ok is below the pager's rule, but it heard of it
    delivery.send_due()
    pager_subjects = [m.subject for m in mail.outbox if m.to == ["pager@example.com"]]
    assert pager_subjects[-1] == "RECOVERED lab Gadgets gadget g1: credits are building up"
    assert len(pager_subjects) == 3


def test_each_kind_of_email_has_a_short_subject_template():
    from apps.alerts.content import SUBJECTS
    from tests.helpers import ROOT

    for name in SUBJECTS:
        lines = (ROOT / "templates" / "emails" / f"{name}-subject.txt").read_text().splitlines()
        assert lines and all(len(line) <= 160 for line in lines), name

"""The dispatcher, the silent-host check, the demo host and the concern registration."""

from __future__ import annotations

import importlib
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.raid import demo, tasks
from apps.raid.collect import ingest
from apps.raid.demo import seed_layout_mdstat
from apps.raid.models import Array, Host
from apps.regions import concerns
from tests.helpers import eager_celery

pytestmark = pytest.mark.django_db
celery_module = importlib.import_module("config.celery_app")


def test_it_claims_due_ssh_hosts_once_per_interval(host):
    host.collection, host.ssh_address, host.interval_s = Host.Collection.SSH, "10.0.0.5", 300
    host.save()
    now = timezone.now()
    assert Host.claim_due(now) == [host.pk]
    assert Host.claim_due(now) == []
    assert Host.claim_due(now + timedelta(seconds=301)) == [host.pk]


def test_push_hosts_are_never_claimed_for_ssh(host):
    assert Host.claim_due(timezone.now() + timedelta(days=1)) == []


def test_the_beat_tick_collects_due_hosts_and_marks_silent_ones_eagerly(ssh_host, sshd, settings):
    settings.VIGIL_RAID_STALE_MINUTES = 15
    sshd.reply(seed_layout_mdstat())
    with eager_celery():
        assert tasks.dispatch_due(timezone.now()) == 1
        assert set(Array.objects.filter(host=ssh_host).values_list("status", flat=True)) == {"ok"}
        Host.objects.filter(pk=ssh_host.pk).update(last_report=timezone.now() - timedelta(hours=4))
        assert tasks.dispatch_due(timezone.now()) == 0  # not due again; silent for 4 h
    assert set(Array.objects.filter(host=ssh_host).values_list("status", flat=True)) == {"unknown"}


def test_it_registers_the_raid_concern():
    concern = next(c for c in concerns.registered() if c.key == "raid")
    assert concern.label == "md-RAID"
    assert concern.region_template == "raid/region_panel.html"
    assert concern.subjects().model is Array


def test_the_demo_is_the_seed_layout_with_a_rebuild_labelled_demo():
    host = demo.set_up()
    again = demo.set_up()
    assert again.pk == host.pk and Host.objects.count() == 1
    assert host.is_demo and host.region.kind == "site" and "Demo" in host.region.name
    md2 = Array.objects.get(host=host, name="md2")
    assert md2.sync_action == "recovery" and md2.sync_percent is not None
    md99 = Array.objects.get(host=host, name="md99")
    assert "md99 survives the loss of any 1 of the 3 storage servers" in md99.domain_headroom_text
    assert Array.objects.filter(host=host).count() == 6


def test_a_renamed_demo_host_stays_the_demo_host_and_its_form_knows_nothing_of_the_demo():
    from apps.raid.forms import FIELDS, HostForm

    host = demo.set_up()
    form = HostForm(instance=host)
    assert not any(field.disabled for field in form.fields.values())
    data = {name: form.initial.get(name) for name in FIELDS}
    data.update(name="storage-client-renamed", region=host.region_id, known_hosts="")
    form = HostForm(data, instance=host)
    assert form.is_valid(), form.errors
    form.save()
    again = demo.set_up()
    assert again.pk == host.pk and again.name == "storage-client-renamed"
    assert Host.objects.count() == 1


def test_the_demo_rebuild_moves_on_without_new_transitions():
    host = demo.set_up()
    first = Array.objects.get(host=host, name="md2").sync_percent
    later = host.created + timedelta(minutes=10)
    demo.refresh(host, now=later)
    md2 = Array.objects.get(host=host, name="md2")
    assert md2.sync_percent == pytest.approx(first + 8, abs=0.2)
    assert demo.rebuild_percent(host, host.created + timedelta(days=3)) < 99
    from apps.alerts.models import Transition

    assert Transition.objects.count() == 6


def test_a_disabled_host_is_not_marked_silent(host):
    ingest(host, seed_layout_mdstat(), now=timezone.now() - timedelta(days=1))
    Host.objects.filter(pk=host.pk).update(enabled=False)
    assert tasks.mark_silent() == 0


def test_the_demo_storage_client_opens_incidents_on_the_alerts_page(settings, logged_in_client):
    settings.VIGIL_DEMO = "true"
    demo.set_up()
    page = logged_in_client.get("/alerts/").content.decode()
    assert "Demo site: on-premises" in page  # the demo site's incidents, grouped under it
    assert "md2: degraded" in page and "md99: member array md2 lost redundancy" in page


def test_the_demo_host_reports_through_the_demo_hook_not_the_dispatcher():
    host = demo.set_up()
    Host.objects.create(name="demo-off", region=host.region, is_demo=True, enabled=False)
    concern = next(c for c in concerns.registered() if c.key == "raid")
    assert concern.demo_runtime is demo.running_reports
    reported = Host.objects.get(pk=host.pk).last_report
    assert demo.refresh_all() == 1  # the enabled demo host only
    assert Host.objects.get(pk=host.pk).last_report >= reported

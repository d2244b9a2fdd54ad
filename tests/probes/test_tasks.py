"""Scheduling and status: due targets claimed once, probed concurrently, saved as each finishes."""

from __future__ import annotations

import importlib
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.alerts.models import Transition
from apps.lib import leases
from apps.lib.status import Status
from apps.probes import tasks
from apps.probes.demo import Behaviour, DemoServers
from apps.probes.models import Result, Target
from apps.regions.models import Region
from tests.helpers import eager_celery
from tests.services import free_port
from tests.services.nginx import Nginx

pytestmark = pytest.mark.django_db
celery_module = importlib.import_module("config.celery_app")


def target(site: Region, url: str, **fields) -> Target:
    fields.setdefault("cap_s", 30.0)
    fields.setdefault("verify_tls", False)
    return Target.objects.create(region=site, url=url, **fields)


def test_it_claims_each_due_target_once_and_moves_it_to_its_next_interval(site):
    now = timezone.now()
    due = target(site, "http://127.0.0.1:1/", interval_s=300, next_due=now)
    later = target(site, "http://127.0.0.1:2/", next_due=now + timedelta(minutes=5))
    off = target(site, "http://127.0.0.1:3/", enabled=False)

    assert Target.claim_due(now) == [due.pk]
    assert Target.claim_due(now) == []
    due.refresh_from_db()
    assert due.next_due == now + timedelta(seconds=300)
    assert later.pk and off.pk


def test_it_queues_due_targets_in_batches_no_larger_than_the_concurrency_limit(
    site, settings, monkeypatch
):
    settings.VIGIL_PROBES_CONCURRENCY = 2
    settings.VIGIL_REGION_QUEUES = ["dc2"]
    other = Region.objects.create(kind=Region.Kind.SITE, code="dc2", name="DC 2")
    third = Region.objects.create(kind=Region.Kind.SITE, code="dc3", name="DC 3")
    ids = [target(site, "http://127.0.0.1:1/").pk, target(third, "http://127.0.0.1:2/").pk]
    ids.append(target(other, "http://127.0.0.1:3/").pk)
    ids.append(target(site, "http://127.0.0.1:4/").pk)
    queued = []
    monkeypatch.setattr(tasks.run_probes, "delay", lambda ids, region: queued.append((ids, region)))

    assert tasks.dispatch_due(timezone.now()) == 4

    # Regions with a queue of their own get their own batches; the rest share.
    assert queued == [([ids[0], ids[1]], None), ([ids[3]], None), ([ids[2]], "dc2")]
    assert celery_module.queue_for(tasks.run_probes.name, "dc2", ["dc2"]) == "probes.dc2"


def test_its_time_limit_covers_the_longest_cap_a_target_may_have():
    longest = Target(cap_s=3600.0, timeout_s=60.0).longest_run_s
    assert tasks.run_probes.soft_time_limit > longest
    assert tasks.run_probes.time_limit > tasks.run_probes.soft_time_limit


def test_it_probes_targets_of_different_lengths_at_once_and_saves_each_as_it_finishes(
    site, nginx: Nginx
):
    one, three, seven = (target(site, nginx.url(nginx.site(k)), name=k) for k in ("1s", "3s", "7s"))
    capped = target(site, nginx.url(nginx.site("7s", tls=True)), name="capped", cap_s=2.0)

    assert tasks.run_probes([one.pk, three.pk, seven.pk, capped.pk]) == 4

    results = {r.target.name: r for r in Result.objects.select_related("target")}
    # Concurrent: every probe had started before the first one finished.
    first_end = min(r.finished_at for r in results.values())
    assert max(r.started_at for r in results.values()) < first_end
    # Saved as each finished: in the order the servers closed, each before the next closed.
    saved = sorted(results.values(), key=lambda r: r.created)
    assert [r.target.name for r in saved] == ["1s", "capped", "3s", "7s"]
    assert results["1s"].created < results["3s"].finished_at
    assert results["3s"].created < results["7s"].finished_at
    assert results["7s"].idle_timeout_s == pytest.approx(7.0, abs=0.5)
    assert results["capped"].idle_timeout_s is None
    assert results["capped"].closed_by == Result.ClosedBy.CAP
    assert not Target.objects.filter(lease_until__isnull=False).exists()


def test_it_skips_a_target_whose_previous_probe_still_runs(site):
    busy = target(site, f"http://127.0.0.1:{free_port()}/")
    assert leases.acquire(Target, busy.pk, busy.lease_ttl())

    assert tasks.run_probes([busy.pk]) == 0
    assert not Result.objects.exists()


def test_it_warns_when_nginx_closes_earlier_than_expected_and_recovers_when_corrected(
    site, nginx: Nginx
):
    probe = target(site, nginx.url(nginx.site("3s")), expected_min_s=60, expected_max_s=75)

    tasks.run_probes([probe.pk])

    probe.refresh_from_db()
    assert probe.status == Status.WARNING
    assert probe.reason == "closes idle connections after 3.0 s, expected 60-75 s"
    transition = Transition.objects.get(object_id=probe.pk, concern="probes")
    assert (transition.old_status, transition.new_status) == (Status.UNKNOWN, Status.WARNING)
    assert transition.reason == probe.reason

    Target.objects.filter(pk=probe.pk).update(expected_min_s=2, expected_max_s=4)
    tasks.run_probes([probe.pk])

    probe.refresh_from_db()
    assert probe.status == Status.OK
    assert probe.reason == "closes idle connections after 3.0 s"
    assert Transition.objects.filter(object_id=probe.pk, concern="probes").count() == 2
    assert [r.status for r in probe.results.order_by("created")] == ["warning", "ok"]


def test_it_warns_when_the_idle_timeout_drifts_from_the_previous_measurement(site, nginx: Nginx):
    probe = target(site, nginx.url(nginx.site("1s")))
    tasks.run_probes([probe.pk])
    Target.objects.filter(pk=probe.pk).update(url=nginx.url(nginx.site("3s")))

    tasks.run_probes([probe.pk])

    probe.refresh_from_db()
    assert probe.status == Status.WARNING
    assert probe.reason.startswith("idle timeout changed from 1.0 s to 3.0 s")


def test_it_is_critical_when_nothing_listens(site):
    probe = target(site, f"http://127.0.0.1:{free_port()}/")

    tasks.run_probes([probe.pk])

    probe.refresh_from_db()
    assert probe.status == Status.CRITICAL
    assert "unreachable" in probe.reason
    result = probe.results.get()
    assert result.idle_timeout_s is None and result.error


def test_it_is_critical_on_an_untrusted_certificate(site, nginx: Nginx):
    probe = target(site, nginx.url(nginx.site("1s", tls=True)), verify_tls=True)

    tasks.run_probes([probe.pk])

    probe.refresh_from_db()
    assert probe.status == Status.CRITICAL
    assert probe.reason.startswith("TLS failure")


def test_it_is_critical_when_the_server_answers_503(site):
    with DemoServers((Behaviour("down", 0.2, (0, 5), status="503 Service Unavailable"),)) as urls:
        probe = target(site, urls[0])
        tasks.run_probes([probe.pk])

    probe.refresh_from_db()
    assert probe.status == Status.CRITICAL
    assert probe.reason == "answered HTTP 503"
    assert probe.results.get().status_code == 503


def test_the_beat_tick_queues_and_runs_due_probes_through_celery(site, nginx: Nginx):
    from apps.regions.tasks import dispatch

    probe = target(site, nginx.url(nginx.site("0")))
    with eager_celery():
        dispatch.delay()

    result = probe.results.get()
    assert result.closed_right_after_response
    assert celery_module.queue_for(tasks.run_probes.name, "lab", []) == "probes"


def test_it_turns_a_target_unknown_when_its_probes_stopped_and_leaves_running_ones_alone(site):
    now = timezone.now()
    stopped = target(site, "http://127.0.0.1:1/", interval_s=60, next_due=now + timedelta(days=1))
    running = target(site, "http://127.0.0.1:2/", interval_s=60, next_due=now + timedelta(days=1))
    for probe in (stopped, running):
        Target.objects.filter(pk=probe.pk).update(status=Status.OK.value)
        Result.objects.create(
            target=probe,
            started_at=now - timedelta(hours=2),
            created=now - timedelta(hours=2),
            cap_s=30,
            idle_timeout_s=3.0,
            status="ok",
        )
    leases.acquire(Target, running.pk, running.lease_ttl())

    tasks.dispatch_due(now)

    stopped.refresh_from_db()
    running.refresh_from_db()
    assert stopped.status == Status.UNKNOWN
    assert stopped.reason.startswith("no measurement since ")
    assert running.status == Status.OK
    assert Transition.objects.filter(object_id=stopped.pk, new_status="unknown").exists()


def test_it_probes_a_url_typed_with_an_idn_host_or_a_non_ascii_path_and_shows_it_as_typed(
    site, admin_client, api_client, api_key
):
    typed_idn = "https://пример.invalid/café/€?q=ü"  # .invalid: never resolves
    added = admin_client.post(
        reverse("admin:probes_target_add"),
        {
            "name": "",
            "url": typed_idn,
            "region": site.pk,
            "interval_s": 900,
            "cap_s": 30,
            "timeout_s": 2,
            "verify_tls": "on",
            "enabled": "on",
            "next_due_0": "2030-01-01",
            "next_due_1": "00:00:00",
        },
    )
    assert added.status_code == 302, added.content.decode()[:2000]
    idn = Target.objects.get()
    assert idn.url == typed_idn
    with DemoServers((Behaviour("keeps", 0.2, (0, 5)),)) as urls:
        typed_path = f"{urls[0]}café/€?q=ü"
        created = api_client.post(
            "/api/probes/targets/",
            {"url": typed_path, "region": site.pk, "cap_s": 30, "verify_tls": False},
            format="json",
            HTTP_AUTHORIZATION=f"Bearer {api_key(read_only=False)}",
        )
        assert created.status_code == 201, created.json()
        assert created.json()["url"] == typed_path
        path_target = Target.objects.get(pk=created.json()["id"])

        assert tasks.run_probes([idn.pk, path_target.pk]) == 2  # returns: nothing hangs

    path_target.refresh_from_db()
    assert path_target.status == Status.OK, path_target.reason
    assert path_target.results.get().status_code == 200
    idn.refresh_from_db()
    assert idn.results.get().error.startswith("DNS failure: xn--e1afmkfd.invalid")
    listed = api_client.get(
        "/api/probes/targets/", HTTP_AUTHORIZATION=f"Bearer {api_key()}"
    ).json()["results"]
    assert {t["url"] for t in listed} == {typed_idn, typed_path}
    page = admin_client.get(reverse("probes:target_detail", args=[idn.pk])).content.decode()
    assert "<code>https://пример.invalid/café/€?q=ü</code>" in page

"""Demo mode: loopback keep-alive servers, and the demo site's targets that probe them."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.lib.status import Status
from apps.probes import tasks
from apps.probes.demo import BEHAVIOURS, DEMO_SITE_CODE, Behaviour, DemoServers, set_up
from apps.probes.keepalive import measure
from apps.probes.models import Target
from apps.regions.demo import ensure_demo_account
from apps.regions.models import Region


async def measure_all(urls: list[str], cap_s: float = 30) -> list:
    return await asyncio.gather(*(measure(url, cap_s=cap_s) for url in urls))


def test_it_serves_each_keep_alive_timeout_on_loopback():
    behaviours = (Behaviour("one", 0.4, (0, 2)), Behaviour("two", 1.0, (0, 3)))
    with DemoServers(behaviours) as urls:
        assert all(url.startswith("http://127.0.0.1:") for url in urls)
        one, two = asyncio.run(measure_all(urls))

    assert one.status_code == two.status_code == 200
    assert one.idle_timeout_s == pytest.approx(0.4, abs=0.25)
    assert two.idle_timeout_s == pytest.approx(1.0, abs=0.25)


def test_it_answers_further_requests_on_the_same_connection():
    with DemoServers((Behaviour("one", 0.5, (0, 2)),)) as urls:
        result = asyncio.run(measure(urls[0], cap_s=5, confirm_reuse_after_s=0.2))

    assert result.reuse_confirmed is True
    assert result.idle_timeout_s == pytest.approx(0.5, abs=0.25)


def test_its_drifting_server_alternates_between_two_timeouts():
    drifting = next(b for b in BEHAVIOURS if b.drift_to_s is not None)
    every = drifting.drift_every_s

    seen = [drifting.keepalive_now(every * window + 1) for window in range(4)]

    assert seen == [drifting.keepalive_s, drifting.drift_to_s] * 2
    assert abs(drifting.drift_to_s - drifting.keepalive_s) > 1


def test_it_leaves_out_a_server_whose_port_is_taken():
    with DemoServers((Behaviour("one", 1.0, (0, 2)),)) as urls:
        port = int(urls[0].rsplit(":", 1)[1].strip("/"))
        with DemoServers((Behaviour("again", 1.0, (0, 2)),), base_port=port) as taken:
            assert taken == [None]


@pytest.mark.django_db
def test_it_sets_up_the_demo_site_once_with_loopback_targets(settings):
    set_up(base_port=9100)
    set_up(base_port=9100)

    site = Region.objects.get(code=DEMO_SITE_CODE)
    assert site.kind == Region.Kind.SITE and site.account.is_demo  # hidden with the demo account
    assert "Demo" in site.name
    targets = list(Target.objects.filter(region=site).order_by("url"))
    assert len(targets) == len(BEHAVIOURS)
    assert [t.url for t in targets] == [f"http://127.0.0.1:{9100 + i}/" for i in range(4)]
    assert all(t.name.startswith("Demo:") and t.enabled for t in targets)


@pytest.mark.slow
@pytest.mark.django_db
def test_the_demo_front_end_is_probed_ok_and_the_mismatched_api_warns():
    front_end, api = BEHAVIOURS[0], BEHAVIOURS[1]
    fast_api = Behaviour(api.name, 2.0, api.expected)  # the same mismatch, sooner
    with DemoServers((front_end, fast_api)) as urls:
        port = int(urls[0].rsplit(":", 1)[1].strip("/"))
        set_up(base_port=port)
        Target.objects.filter(name=api.name).update(url=urls[1])  # its port is random here
        targets = Target.objects.filter(name__in=[front_end.name, api.name])
        tasks.run_probes([t.pk for t in targets])

    ok = Target.objects.get(name=front_end.name)
    assert ok.status == Status.OK
    assert ok.reason == "closes idle connections after 5.0 s"
    warned = Target.objects.get(name=api.name)
    assert warned.status == Status.WARNING
    assert warned.reason == "closes idle connections after 2.0 s, expected 60-75 s"


@pytest.mark.django_db
def test_out_of_demo_mode_the_demo_site_is_hidden_and_no_longer_probed_until_demo_returns():
    set_up(base_port=9100)

    ensure_demo_account(False)  # what make run does out of demo mode

    assert not Region.objects.shown().filter(code=DEMO_SITE_CODE).exists()
    assert Target.claim_due(timezone.now() + timedelta(days=1)) == []
    set_up(base_port=9100)
    assert Region.objects.shown().filter(code=DEMO_SITE_CODE).exists()
    assert len(Target.claim_due(timezone.now() + timedelta(days=1))) == len(BEHAVIOURS)

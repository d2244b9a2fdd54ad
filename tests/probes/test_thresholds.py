"""Keep-alive thresholds per target and per region: a certificate warning window set for one
target changes its status only, one set for the region applies to its targets unless one sets
its own, and the reason says which threshold applied."""

from __future__ import annotations

from datetime import timedelta

import pytest

from apps.lib.status import Status
from apps.probes.models import Target
from apps.regions import thresholds
from apps.regions.models import Region
from tests.probes.test_verdict import NOW, measured

EXPIRING = measured(60.0, tls_expires=NOW + timedelta(days=10))  # the default warns at 14


def judged(target: Target):
    return Target.objects.select_related("region").get(pk=target.pk).judge(EXPIRING, now=NOW)


@pytest.mark.django_db
def test_a_per_target_threshold_changes_that_target_and_no_other(site):
    quiet = Target.objects.create(region=site, url="https://a.example.test/")
    other = Target.objects.create(region=site, url="https://b.example.test/")
    thresholds.replace("probes", site, quiet.pk, {"cert_warn_days": 7})
    assert judged(quiet).status is Status.OK
    assert judged(other).status is Status.WARNING
    thresholds.replace("probes", site, quiet.pk, {"cert_warn_days": 30, "tolerance_s": 2})
    assert judged(quiet).reason == (
        "TLS certificate expires in 10 days (2026-12-02) "
        "(within 30 days: this target's threshold; default 14 days)"
    )


@pytest.mark.django_db
def test_a_region_threshold_applies_unless_the_target_sets_its_own(site):
    plain = Target.objects.create(region=site, url="https://a.example.test/")
    own = Target.objects.create(region=site, url="https://b.example.test/")
    far_site = Region.objects.create(kind=Region.Kind.SITE, code="far", name="Far")
    far = Target.objects.create(region=far_site, url="https://c.example.test/")
    thresholds.replace("probes", site, None, {"cert_warn_days": 7})
    thresholds.replace("probes", site, own.pk, {"cert_warn_days": 12})
    assert judged(plain).status is Status.OK
    assert judged(own).status is Status.WARNING
    assert "this target's threshold" in judged(own).reason
    assert judged(far).status is Status.WARNING  # another region: the default
    assert "threshold" not in judged(far).reason


@pytest.mark.django_db
def test_admins_set_them_through_the_api_and_the_page(site, admin_client, client, operator):
    target = Target.objects.create(region=site, url="https://a.example.test/")
    url = f"/api/probes/targets/{target.pk}/thresholds/"
    put = admin_client.put(url, {"tolerance_s": 5}, content_type="application/json")
    assert put.status_code == 200 and put.json()["applied"]["tolerance_s"]["level"] == "subject"
    page = admin_client.get(f"/probes/targets/{target.pk}/").content.decode()
    assert "Idle timeout changed by more than" in page and "Save the thresholds" in page
    client.force_login(operator)  # operators manage targets, not thresholds
    assert client.put(url, {"tolerance_s": 9}, content_type="application/json").status_code == 403
    assert "Save the thresholds" not in client.get(f"/probes/targets/{target.pk}/").text

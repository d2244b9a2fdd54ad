"""Targets: validation, the previous measurement for the drift rule, and settings in verdicts."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.utils import timezone

from apps.lib.status import Status
from apps.probes.keepalive import Measurement
from apps.probes.models import Result, Target

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"url": "ftp://127.0.0.1/"}, "url"),
        ({"expected_min_s": 60}, "both ends"),
        ({"expected_min_s": 75, "expected_max_s": 60}, r"ends \(60 s\) before it starts"),
        ({"cap_s": 7200}, "cap_s"),
        ({"interval_s": 10}, "interval_s"),
    ],
)
def test_it_refuses_an_invalid_target(site, fields, message):
    target = Target(region=site, **{"url": "http://127.0.0.1/", **fields})

    with pytest.raises(ValidationError, match=message):
        target.full_clean()


def test_the_database_refuses_half_an_expected_range(site):
    with pytest.raises(IntegrityError):
        Target.objects.create(region=site, url="http://127.0.0.1/", expected_max_s=5)


def test_it_compares_with_the_last_measured_idle_timeout_skipping_failures(site):
    target = Target.objects.create(region=site, url="http://127.0.0.1/")
    now = timezone.now()
    for minutes, idle in ((30, 4.0), (20, 5.0), (10, None)):
        Result.objects.create(
            target=target,
            started_at=now,
            created=now - timedelta(minutes=minutes),
            cap_s=30,
            idle_timeout_s=idle,
            error="" if idle else "refused",
            status="ok",
        )

    assert target.last_idle_timeout_s() == 5.0


def test_it_warns_about_the_certificate_within_the_configured_days(site, settings):
    settings.VIGIL_PROBES_CERT_WARN_DAYS = 40
    target = Target.objects.create(region=site, url="https://127.0.0.1/")
    now = datetime(2026, 1, 1, tzinfo=UTC)
    measurement = Measurement(
        url=target.url,
        started_at=now,
        status_code=200,
        idle_timeout_s=5.0,
        closed_by="server",
        tls_expires=now + timedelta(days=30),
    )

    verdict = target.judge(measurement, now=now)

    assert verdict.status == Status.WARNING
    assert verdict.reason == "TLS certificate expires in 30 days (2026-01-31)"
    settings.VIGIL_PROBES_CERT_WARN_DAYS = 14
    assert target.judge(measurement, now=now).status == Status.OK


def test_it_keeps_every_measurement_field_in_a_result(site):
    target = Target.objects.create(region=site, url="https://127.0.0.1/")
    now = timezone.now()
    measurement = Measurement(
        url=target.url,
        started_at=now,
        peer_address="127.0.0.1",
        status_code=200,
        idle_timeout_s=5.01,
        closed_by="server",
        closed_with="reset",
        advertised_timeout_s=3.0,
        advertised_timeout_matched=False,
        reuse_confirmed=True,
        cap_s=30,
        dns_s=0.001,
        connect_s=0.002,
        tls_s=0.003,
        first_byte_s=0.004,
        total_s=0.01,
        tls_expires=now + timedelta(days=90),
    )
    verdict = target.judge(measurement)

    result = Result.from_measurement(target, measurement, verdict)
    result.save()
    result.refresh_from_db()

    # Every measured field (the URL is the target's; no error here, stored as "").
    for field in dataclasses.fields(Measurement):
        if field.name not in ("url", "error"):
            assert getattr(result, field.name) == getattr(measurement, field.name), field.name
    assert result.error == ""
    assert result.finished_at == now + timedelta(seconds=0.01 + 5.01)

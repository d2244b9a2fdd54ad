"""CloudWatch throttles every call for whole cycles: the region shows the error, nothing is
invented, subjects turn unknown only once their data is stale, and the cycle after the
throttling back-fills the outage and converges.

The cycles run in this process, as plain function calls of the task (the workers' side of
the faults is in the other modules); every AWS call crosses a real loopback proxy that
answers HTTP 400 ``Throttling`` for as long as the test says.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.alerts import delivery
from apps.efs import charts, history, tasks
from apps.efs.models import FileSystem, MetricMinute
from apps.regions import concerns
from tests.services.ses_proxy import SENDER

from .fleet import (
    assert_no_notification_lost_or_doubled,
    assert_no_transition_lost,
    assert_rows_are_the_truth,
    assert_statuses_are_the_truth,
    create_fleet,
    create_region,
    outage,
    statuses,
)

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def ses_email(settings, aws):
    """Alerts leave through moto's SES, as in production, so the test can count emails."""
    settings.EMAIL_BACKEND = "apps.alerts.integrations.email.ses.EmailBackend"
    settings.DEFAULT_FROM_EMAIL = SENDER
    settings.ANYMAIL = {
        "AMAZON_SES_CLIENT_PARAMS": {"region_name": "us-east-1", "endpoint_url": aws}
    }
    settings.VIGIL_ALERT_HOLD_SECONDS = 0
    settings.VIGIL_ALERT_REPEAT_HOLD_SECONDS = 0


def gap_minutes(fs: FileSystem, start, end) -> list:
    """The file system page's chart series over [start, end): the values of its minutes."""
    samples = history.load_samples([fs.pk], start, end)[fs.pk]
    return charts.series(samples, start, end, timedelta(minutes=1))["metered_mibps"]


def test_it_keeps_a_throttled_region_honest_and_back_fills_when_throttling_stops(
    cloudwatch, aws, ses_email, settings
):
    settings.VIGIL_EFS_STALE_MINUTES = 15
    create_fleet(aws)
    rc = create_region()
    tasks.collect_region(rc.pk)
    delivery.send_due()
    known = statuses()
    assert "unknown" not in known.values()

    # A short outage: the data is still fresh. The throttled cycle fails as a whole
    # (botocore retried, then gave up) and changes no status.
    cut = outage(8)
    cloudwatch.throttling = True
    tasks.collect_region(rc.pk)
    rc.refresh_from_db()
    assert rc.last_error == "Throttling: Rate exceeded"
    assert cloudwatch.throttled == settings.AWS_MAX_ATTEMPTS  # one call, tried, then given up
    assert concerns.region_errors([rc.region_id])[rc.region_id] == [
        "EFS: Throttling: Rate exceeded"
    ]  # the home tile's error line
    assert statuses() == known
    assert not MetricMinute.objects.filter(ts__gte=cut).exists()  # nothing invented
    for fs in FileSystem.objects.all():
        assert fs.last_error == "Throttling: Rate exceeded"
        assert set(gap_minutes(fs, cut, timezone.now())) == {None}  # a gap, not zeros

    # The throttling lasts: once the data is older than VIGIL_EFS_STALE_MINUTES, the
    # subjects are unknown, saying why, never ok.
    cut = outage(20)
    tasks.collect_region(rc.pk)
    assert set(statuses().values()) == {"unknown"}
    for fs in FileSystem.objects.all():
        assert fs.reason.startswith("no data for 2")
        assert fs.reason.endswith("collection failing: Throttling: Rate exceeded")
    delivery.send_due()

    cloudwatch.throttling = False
    tasks.collect_region(rc.pk)
    delivery.send_due()

    rc.refresh_from_db()
    assert rc.last_error == "" and concerns.region_errors([rc.region_id]) == {}
    end = FileSystem.objects.values_list("collected_until", flat=True).distinct().get()
    assert end - cut >= timedelta(minutes=20 - settings.VIGIL_EFS_SETTLE_MINUTES)
    assert_rows_are_the_truth(cut, end)  # back-filled from CloudWatch: the gap is closed
    for fs in FileSystem.objects.all():
        assert None not in gap_minutes(fs, cut, end)
    assert_statuses_are_the_truth(rc)
    assert_no_transition_lost()
    assert assert_no_notification_lost_or_doubled(aws) >= 2

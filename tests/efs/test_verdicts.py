"""Verdicts recorded per file system through alerts: credits, I/O limit, missing data."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.alerts.models import Transition
from apps.efs import collect, history
from apps.efs.metrics import GIB, TIB, Sample
from apps.efs.models import FileSystem, RegionCollection
from apps.lib.cloudwatch import align
from apps.regions.models import Account, Region

pytestmark = pytest.mark.django_db


@pytest.fixture
def rc() -> RegionCollection:
    account = Account.objects.create(name="a")
    region = Region.objects.create(account=account, code="us-east-1")
    return RegionCollection.objects.create(region=region)


def fs_with(rc, samples, **fields) -> FileSystem:
    fs = FileSystem.objects.create(region=rc.region, filesystem_id="fs-0123abcd", **fields)
    history.save_samples({fs.pk: samples})
    return fs


def minutes(end, n, **values_at):
    return [
        Sample(end - timedelta(minutes=n - i), **{k: f(i) for k, f in values_at.items()})
        for i in range(n)
    ]


def test_it_warns_when_credits_run_out_within_hours_and_writes_one_transition(rc):
    now = timezone.now()
    end = align(now - timedelta(minutes=3))
    # 0.3 TiB left, spending 1 GiB a minute: about 5 h.
    samples = minutes(
        end,
        180,
        burst_credit_balance=lambda i: 0.3 * TIB + (180 - i) * GIB,
        storage_standard_bytes=lambda i: 100 * GIB,
    )
    fs = fs_with(rc, samples)

    collect.judge_region(rc, now)
    collect.judge_region(rc, now)

    fs.refresh_from_db()
    assert fs.status == "warning"
    assert "credits run out in ~5 h" in fs.reason
    assert fs.figures["credit_state"] == "draining"
    # The email's "drained ... in the last 3 h": 1 GiB a minute over the window's samples.
    assert fs.figures["credits_drained_bytes"] == pytest.approx(177 * GIB, rel=0.02)
    assert fs.figures["drain_window_hours"] == 3
    assert Transition.objects.filter(object_id=fs.pk).count() == 1


def test_it_says_the_throughput_is_capped_when_credits_are_gone(rc):
    now = timezone.now()
    end = align(now - timedelta(minutes=3))
    samples = minutes(
        end,
        30,
        burst_credit_balance=lambda i: 0.0,
        permitted_throughput=lambda i: 5_000 * 1024.0,
        storage_standard_bytes=lambda i: 100 * GIB,
    )
    fs = fs_with(rc, samples)
    collect.judge_region(rc, now)
    fs.refresh_from_db()
    assert fs.status == "critical"
    assert fs.reason == "burst credits exhausted: throughput capped at 4.9 MiB/s baseline"


def test_it_turns_unknown_when_data_stops_arriving(rc):
    now = timezone.now()
    end = align(now - timedelta(minutes=20))
    fs = fs_with(rc, minutes(end, 30, percent_io_limit=lambda i: 10.0))
    collect.judge_region(rc, now)
    fs.refresh_from_db()
    assert fs.status == "unknown" and fs.reason.startswith("no data for 2")


def test_it_does_not_judge_credits_of_an_elastic_file_system(rc):
    now = timezone.now()
    end = align(now - timedelta(minutes=3))
    fs = fs_with(rc, minutes(end, 30, percent_io_limit=lambda i: 20.0), throughput_mode="elastic")
    collect.judge_region(rc, now)
    fs.refresh_from_db()
    assert fs.status == "ok" and "credit_state" not in fs.figures


def test_a_clients_slow_reverse_lookup_of_the_file_system_warns_and_alerts(rc):
    """The lock trap: a healthy file system whose reporting client takes 5 s to look its
    server's address up is a warning, with why it matters, through one transition."""
    from apps.efs.client_push import read_push, store
    from tests.efs.builders import mountstats

    now = timezone.now()
    end = align(now - timedelta(minutes=3))
    fs = fs_with(
        rc,
        minutes(
            end,
            30,
            burst_credit_balance=lambda i: 2 * TIB,
            storage_standard_bytes=lambda i: 100 * GIB,
        ),
    )
    collect.judge_region(rc, now)
    fs.refresh_from_db()
    assert fs.status == "ok"
    slow = [{"server": "fs-0123abcd.efs.us-east-1.amazonaws.com", "address": "10.1.2.3",
             "reverse_seconds": 5.0, "forward_seconds": 0.01, "forward_ok": True}]  # fmt: skip
    hostname, instance_id, mounts, _, _ = read_push(
        {"hostname": "web-1", "mountstats": mountstats()}
    )
    store(hostname, instance_id, mounts, read_push({"hostname": "x", "mountstats": mountstats(),
          "lookups": slow})[3], [], now)  # fmt: skip
    collect.judge_region(rc, now)
    fs.refresh_from_db()
    assert fs.status == "warning"
    assert "reverse lookup of 10.1.2.3 takes 5.0 s on web-1" in fs.reason
    assert "locking hangs while reads and writes work" in fs.reason
    assert Transition.objects.filter(new_status="warning").count() == 1

"""seed_fleet: a synthetic fleet with history, its counts, and pages that render it."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.models import Count

from apps.alerts.models import Transition
from apps.demo.fleet import ACCOUNT_NAME
from apps.efs.models import FileSystem, MetricHour, MetricMinute
from apps.galera.models import Cluster, Node, Snapshot
from apps.lib import partitions
from apps.probes.models import Result, Target
from apps.raid.models import Array, Host, Member
from apps.regions.models import Account, Region

from .pages import page_url, seed

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

SIZES = {"filesystems": 6, "regions": 3, "clusters": 3, "arrays": 10, "probes": 4}


def test_it_seeds_every_concern_with_history():
    out = io.StringIO()
    call_command("seed_fleet", days=2, minute_days=1, stdout=out, stderr=io.StringIO(), **SIZES)
    account = Account.objects.get(name=ACCOUNT_NAME)
    assert not account.is_demo
    assert Region.objects.filter(account=account).count() == 3
    assert FileSystem.objects.count() == 6
    assert Cluster.objects.count() == 3 and Node.objects.count() >= 6
    assert Array.objects.count() == 10 and Member.objects.count() > 10
    assert Array.objects.filter(parent__isnull=False).exists()  # nested arrays
    assert Target.objects.count() == 4
    # Every file system has a day of minutes (less its gaps: an outage, or it stopped
    # reporting) and hours before them.
    per_fs = MetricMinute.objects.values("filesystem").annotate(n=Count("pk"))
    counts = sorted(row["n"] for row in per_fs)
    assert len(counts) == 6 and all(
        500 <= n <= 1500 for n in counts
    )  # a day from the hour, less gaps
    assert counts[2] >= 1400  # most have every minute
    assert MetricHour.objects.filter(minutes=60).count() >= 6 * 20
    assert Snapshot.objects.count() >= 3 * 2 * 24 * 12 - 3 * 2
    assert Result.objects.count() >= 4 * 2 * 24
    # History: transitions are already handled (never emailed), the subjects' last one is now.
    assert Transition.objects.exists()
    assert not Transition.objects.filter(processed__isnull=True).exists()
    for fs in FileSystem.objects.all():
        last = Transition.objects.filter(object_id=fs.pk, concern="efs").order_by("-created")
        assert last[0].new_status == fs.status
    assert "EFS minute rows" in out.getvalue() and "Transitions" in out.getvalue()
    # On PostgreSQL each day's rows went to its own partition, none to the default one.
    for model in (MetricMinute, Result):
        if partitions.partitioned(model):
            with connection.cursor() as cursor:
                cursor.execute(f"SELECT count(*) FROM {model._meta.db_table}_default")
                assert cursor.fetchone()[0] == 0


def test_it_mixes_statuses_from_the_products_own_verdicts():
    seed(filesystems=40, regions=2, clusters=12, arrays=30, probes=30)
    statuses = set(FileSystem.objects.values_list("status", flat=True))
    statuses |= set(Cluster.objects.values_list("status", flat=True))
    statuses |= set(Array.objects.values_list("status", flat=True))
    statuses |= set(Target.objects.values_list("status", flat=True))
    assert {"ok", "warning", "critical"} <= statuses
    assert FileSystem.objects.filter(status="ok").count() > 10
    fs = FileSystem.objects.exclude(figures={}).first()
    assert "io_limit_pct" in fs.figures or "throughput_utilisation_pct" in fs.figures


def test_it_refuses_to_seed_twice_and_replaces_only_its_own_fleet():
    other = Account.objects.create(name="prod")
    region = Region.objects.create(account=other, code="eu-west-1", opt_in_status="opted-in")
    mine = FileSystem.objects.create(region=region, filesystem_id="fs-keep")
    seed(**SIZES)
    with pytest.raises(CommandError, match="--replace"):
        call_command("seed_fleet", days=1, stdout=io.StringIO(), stderr=io.StringIO(), **SIZES)
    seed(filesystems=2, regions=1, clusters=1, arrays=1, probes=1)
    assert Account.objects.filter(name=ACCOUNT_NAME).count() == 1
    assert FileSystem.objects.filter(region__account__name=ACCOUNT_NAME).count() == 2
    assert Host.objects.count() == 1 and Target.objects.count() == 2 - 1
    assert FileSystem.objects.filter(pk=mine.pk).exists()


@pytest.mark.parametrize("page", ["home", "region", "filesystem", "cluster", "host", "probe"])
def test_the_seeded_fleet_renders_on_every_page(logged_in_client, page):
    seed(**SIZES)
    response = logged_in_client.get(page_url(page))
    assert response.status_code == 200
    assert b"Traceback" not in response.content

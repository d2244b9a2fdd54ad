"""Helpers for the tests that seed a fleet and count the queries of its pages."""

from __future__ import annotations

import io

from django.core.management import call_command
from django.db import connection
from django.db.models import Count
from django.test.utils import CaptureQueriesContext

SMALL = {"filesystems": 3, "regions": 2, "clusters": 2, "arrays": 4, "probes": 2}
BIGGER = {"filesystems": 12, "regions": 2, "clusters": 8, "arrays": 24, "probes": 10}


def seed(**sizes: int) -> None:
    """A seeded fleet of ``sizes`` with two days of history (one of minutes), replacing any."""
    options = {"days": 2, "minute_days": 1, **sizes}
    call_command("seed_fleet", replace=True, stdout=io.StringIO(), stderr=io.StringIO(), **options)


def page_url(page: str) -> str:
    """The URL of ``page`` on the seeded fleet: its busiest region, the subject with the most."""
    from apps.demo.fleet import ACCOUNT_NAME
    from apps.efs.models import FileSystem
    from apps.galera.models import Cluster
    from apps.probes.models import Target
    from apps.raid.models import Host
    from apps.regions.models import Region

    regions = Region.objects.filter(account__name=ACCOUNT_NAME)
    if page == "home":
        return "/"
    if page == "region":
        region = regions.annotate(n=Count("efs_filesystems")).order_by("-n", "pk").first()
        return f"/regions/{region.pk}/"
    if page == "filesystem":
        fs = FileSystem.objects.filter(region__in=regions, throughput_mode="bursting").first()
        fs = fs or FileSystem.objects.filter(region__in=regions).first()
        return f"/efs/filesystems/{fs.pk}/?range=7d"
    if page == "cluster":
        cluster = Cluster.objects.filter(region__in=regions).order_by("-expected_data_nodes")[0]
        return f"/galera/clusters/{cluster.pk}/"
    if page == "host":
        host = Host.objects.annotate(n=Count("arrays")).order_by("-n", "pk").first()
        return f"/raid/hosts/{host.pk}/"
    if page == "probe":
        return f"/probes/targets/{Target.objects.filter(region__in=regions).first().pk}/"
    raise ValueError(page)


def queries(client, page: str, **sizes: int) -> int:
    """Seed a fleet of ``sizes``, then count the SQL queries of one request of ``page`` (after
    one that warms the per-process caches, such as content types)."""
    seed(**sizes)
    url = page_url(page)
    assert client.get(url).status_code == 200
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return len(captured.captured_queries)

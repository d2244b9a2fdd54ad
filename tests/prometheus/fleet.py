"""A small fleet of every concern, bulk-created, for the /metrics tests and bench/metrics.py."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from apps.efs.models import FileSystem
from apps.galera.models import Cluster
from apps.probes.models import Result, Target
from apps.raid.models import Array, Host
from apps.regions.models import Account, Region


def build_fleet(
    n: int = 0,
    *,
    regions: int = 2,
    prefix: str = "fleet",
    filesystems: int | None = None,
    clusters: int | None = None,
    arrays: int | None = None,
    probes: int | None = None,
    results: int = 2,
) -> None:
    """``n`` file systems, clusters, arrays and probe targets (unless given one by one), each
    target with ``results`` results 15 minutes apart, spread over ``regions`` regions of a new
    account, every figure filled in."""
    filesystems, clusters, arrays, probes = (
        n if count is None else count for count in (filesystems, clusters, arrays, probes)
    )
    account = Account.objects.create(name=f"{prefix}-account")
    codes = [f"{prefix}-{i}" for i in range(regions)]
    Region.objects.bulk_create(
        Region(account=account, code=code, opt_in_status="opt-in-not-required") for code in codes
    )
    in_region = list(Region.objects.filter(account=account).order_by("code"))
    now = timezone.now()
    FileSystem.objects.bulk_create(
        FileSystem(
            region=in_region[i % regions],
            filesystem_id=f"fs-{prefix}{i:05d}",
            name=f"share-{i}",
            status="ok",
            figures={
                "io_limit_pct": 10.0 + i % 80,
                "throughput_utilisation_pct": 5.0,
                "permitted_mibps": 105.0,
                "credit_balance_bytes": 2.0e12,
                "hours_to_exhaustion": 30.0,
                "last_data_at": now.isoformat(),
            },
        )
        for i in range(filesystems)
    )
    Cluster.objects.bulk_create(
        Cluster(
            region=in_region[i % regions],
            name=f"{prefix}-db-{i}",
            status="ok",
            polled_at=now,
            cluster_size=3,
            primary=True,
            data_nodes=3,
            arbitrators=0,
            one_by_one=1,
            simultaneous=1,
        )
        for i in range(clusters)
    )
    hosts = Host.objects.bulk_create(
        Host(name=f"{prefix}-host-{i}", region=in_region[i % regions]) for i in range(arrays)
    )
    Array.objects.bulk_create(
        Array(
            region=host.region,
            host=host,
            name="md0",
            status="ok",
            level="raid1",
            raid_disks=2,
            active_disks=2,
            headroom=1,
        )
        for host in hosts
    )
    targets = Target.objects.bulk_create(
        Target(
            region=in_region[i % regions],
            name=f"{prefix}-site-{i}",
            url=f"https://{prefix}-{i}.example.com/",
            status="ok",
        )
        for i in range(probes)
    )
    Result.objects.bulk_create(
        (
            Result(
                target=target,
                created=now - timedelta(minutes=15 * age),
                started_at=now - timedelta(minutes=15 * age, seconds=80),
                status_code=200,
                idle_timeout_s=75.0 - age % 2,
                cap_s=1200.0,
                status="ok",
            )
            for target in targets
            for age in range(results)
        ),
        batch_size=5000,
    )

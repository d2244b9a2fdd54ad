"""Demo mode: the seed's storage client (md99 over md1..md5 on three storage servers).

``set_up()`` (idempotent) adds, in the demo AWS region, a host that "pushes" the seed layout with one rebuild
in progress, through the same ingest path as a real report. ``refresh(now)`` re-sends it from
the dispatcher, with the rebuild further along, so the demo host never goes stale.
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from apps.demo.mode import demo_region

from .collect import ingest
from .demo import SEED_RULES, seed_layout_mdstat
from .models import Host

DEMO_HOST = "demo-storage-client"
REBUILDING = "sdh"  # storage-b's disk in md2, re-added and recovering
START_PERCENT = 37.4
PERCENT_PER_MINUTE = 0.8  # 148 MiB/s over a 1 TiB disk


def rebuild_percent(host: Host, now: datetime) -> float:
    """Where the demo rebuild is: it advances with time and starts over before it completes."""
    minutes = max((now - host.created).total_seconds() / 60, 0)
    span = 99.0 - START_PERCENT
    return round(START_PERCENT + (minutes * PERCENT_PER_MINUTE) % span, 1)


def set_up() -> Host:
    region = demo_region()
    host, created = Host.objects.get_or_create(
        name=DEMO_HOST,
        defaults={
            "region": region,
            "collection": Host.Collection.PUSH,
            "domain_rules": SEED_RULES,
            "domain_noun": "storage server",
        },
    )
    if created:
        Host.objects.filter(pk=host.pk).update(is_demo=True)
        host.is_demo = True
    elif host.is_demo and host.region_id != region.pk:  # moved from an earlier demo's site
        Host.objects.filter(pk=host.pk).update(region=region)
        host.arrays.update(region=region)
        host.region = region
    refresh(host)
    return host


def refresh(host: Host, now: datetime | None = None) -> None:
    now = now or timezone.now()
    text = seed_layout_mdstat(rebuilding=REBUILDING, percent=rebuild_percent(host, now))
    ingest(host, text, now=now)

"""A batch of keep-alive probes, between the adapter and the database: measure every target
of the batch at once in one event loop (``keepalive.measure_many`` on a helper thread), and
judge (``Target.judge``, over ``verdict.py``), save and record each result as soon as its probe
ends, while the others are still waiting.

The Celery task (``tasks.run_probes``) calls ``probe_batch``; each target is held by a lease
while it is probed, so a batch that runs twice measures nothing twice at once.
"""

from __future__ import annotations

import logging
from contextlib import closing

from django.conf import settings

from apps import alerts
from apps.lib import leases

from .keepalive import Measurement, ProbeSpec, measure_many
from .loopthread import iterate_in_thread
from .models import Result, Target

log = logging.getLogger(__name__)


def probe_batch(target_ids: list[int]) -> int:
    """Probe the targets concurrently; save each result as it finishes. How many ran."""
    held = {}  # target -> its lease's end, our token to give it back
    targets = []
    for t in Target.objects.filter(pk__in=target_ids, enabled=True):
        if until := leases.acquire(Target, t.pk, t.lease_ttl()):
            held[t.pk] = until
            targets.append(t)
    if not targets:
        return 0
    specs = [t.spec() for t in targets]
    limit = max(1, settings.VIGIL_PROBES_CONCURRENCY)
    try:
        with closing(iterate_in_thread(lambda: measure_many(specs, limit), name="probes")) as done:
            for spec, measurement in done:
                save_result(spec, measurement)
                leases.release(Target, spec.tag, held.pop(spec.tag))
    finally:
        for pk, until in held.items():  # probes that never finished
            leases.release(Target, pk, until)
    return len(targets)


def save_result(spec: ProbeSpec, measurement: Measurement) -> Result | None:
    """Judge one finished probe against its target as it is now, save it, record the status."""
    target = Target.objects.filter(pk=spec.tag).first()
    if target is None:
        return None  # deleted while it was probed
    verdict = target.judge(measurement)
    result = Result.from_measurement(target, measurement, verdict)
    result.save()
    alerts.record(target, verdict)
    log.info("Probed %s: %s (%s)", target, verdict.status, verdict.reason)
    return result

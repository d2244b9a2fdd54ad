"""Judge a gadget's reading and record its status (the gadgets have no outside system)."""

from __future__ import annotations

from django.conf import settings

from apps import alerts
from apps.lib.status import Verdict

from .models import Gadget
from .verdict import gadget_verdict


def collect(gadget: Gadget, reading: float | None) -> Verdict:
    verdict = gadget_verdict(reading, settings.VIGIL_GADGETS_CRITICAL_PERCENT)
    alerts.record(gadget, verdict)
    return verdict

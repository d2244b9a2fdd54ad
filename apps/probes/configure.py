"""Adding and editing probe targets in the app (Operators and Admins): the form says what is
wrong as it is typed (``apps.lib.liveforms``), and "Measure once" probes the URL as the form
stands, through the outbound guard, and shows the result before anything is saved."""

from __future__ import annotations

import asyncio
from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from apps.lib import outbound
from apps.regions import editing
from apps.regions import thresholds as region_thresholds
from apps.regions.models import Region

from .keepalive import Measurement, measure
from .models import Target, thresholds
from .verdict import probe_verdict

FIELDS = [
    "name", "url", "region", "expected_min_s", "expected_max_s", "interval_s", "cap_s",
    "timeout_s", "verify_tls", "enabled",
]  # fmt: skip
#: "Measure once" waits at most this long for the server to close an idle connection: the
#: page answers within it; a longer keep-alive shows as "still open at the cap".
TRY_CAP_S = 20.0


def _formfield(field: Any, **kwargs: Any) -> Any:
    # A URL typed without a scheme means https:// (Django 6's default; 5.2 warns otherwise).
    if field.name == "url":
        kwargs["assume_scheme"] = "https"
    return field.formfield(**kwargs)


class TargetForm(forms.ModelForm):
    class Meta:
        model = Target
        fields = FIELDS
        formfield_callback = _formfield

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["region"].queryset = Region.objects.shown()


def try_once(target: Target) -> tuple[Measurement, Any]:
    """Probe the unsaved target once (cap at ``TRY_CAP_S``) and judge it."""
    measurement = asyncio.run(
        measure(
            target.url,
            cap_s=min(target.cap_s, TRY_CAP_S),
            timeout_s=min(target.timeout_s, 10.0),
            verify_tls=target.verify_tls,
            policy=outbound.Policy.from_settings(),
        )
    )
    verdict = probe_verdict(
        measurement,
        expected_range=target.expected_range,
        thresholds=region_thresholds.for_subject(target, thresholds())
        if target.pk
        else thresholds(),
        now=timezone.now(),
    )
    return measurement, verdict


def edit_target(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    return editing.edit_page(request, TargetForm, pk, trial=_trial)


def _trial(target: Target) -> dict[str, Any]:
    measurement, verdict = try_once(target)
    return {"measurement": measurement, "verdict": verdict, "cap": TRY_CAP_S}

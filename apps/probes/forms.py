"""The form of a probe target, in the app: a URL typed without a scheme means https://."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.regions.models import Region

from .models import Target

FIELDS = [
    "name", "url", "region", "expected_min_s", "expected_max_s", "interval_s", "cap_s",
    "timeout_s", "verify_tls", "enabled",
]  # fmt: skip


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

from __future__ import annotations

from datetime import timedelta

from django import forms
from django.utils import timezone

from .models import Channel, Rule, Silence


class SilenceForm(forms.ModelForm):
    """A silence from now or a planned start, for a region, a concern or one subject."""

    starts = forms.DateTimeField(
        required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text="Empty: now. Planned maintenance: when it begins (UTC).",
    )
    hours = forms.FloatField(min_value=0.1, max_value=24 * 14, initial=2, help_text="How long.")

    class Meta:
        model = Silence
        fields = ["region", "concern", "content_type", "object_id", "comment"]
        widgets = {"content_type": forms.HiddenInput, "object_id": forms.HiddenInput}

    def clean(self) -> dict:
        data = super().clean()
        if bool(data.get("content_type")) != bool(data.get("object_id")):
            raise forms.ValidationError("A subject needs both its type and its id.")
        return data

    def save(self, author) -> Silence:  # type: ignore[override]
        silence = super().save(commit=False)
        silence.author = author
        silence.starts = self.cleaned_data["starts"] or timezone.now()
        silence.ends = silence.starts + timedelta(hours=self.cleaned_data["hours"])
        silence.save()
        return silence


class RuleForm(forms.ModelForm):
    """A routing rule; a subject (hidden fields) comes from the subject's history page."""

    class Meta:
        model = Rule
        fields = [
            "name",
            "region",
            "concern",
            "content_type",
            "object_id",
            "min_severity",
            "channels",
            "enabled",
        ]
        widgets = {
            "channels": forms.CheckboxSelectMultiple,
            "content_type": forms.HiddenInput,
            "object_id": forms.HiddenInput,
        }

    def clean(self) -> dict:
        data = super().clean()
        if bool(data.get("content_type")) != bool(data.get("object_id")):
            raise forms.ValidationError("A subject needs both its type and its id.")
        return data


class ChannelForm(forms.ModelForm):
    class Meta:
        model = Channel
        fields = ["name", "kind", "target", "disabled"]

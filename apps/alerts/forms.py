from __future__ import annotations

from datetime import timedelta

from django import forms
from django.utils import timezone

from .models import Channel, Rule, Silence


class SilenceForm(forms.ModelForm):
    hours = forms.FloatField(
        min_value=0.1, max_value=24 * 14, initial=2, help_text="How long, from now."
    )

    class Meta:
        model = Silence
        fields = ["region", "concern", "comment"]

    def save(self, author) -> Silence:  # type: ignore[override]
        silence = super().save(commit=False)
        silence.author = author
        silence.starts = timezone.now()
        silence.ends = silence.starts + timedelta(hours=self.cleaned_data["hours"])
        silence.save()
        return silence


class RuleForm(forms.ModelForm):
    class Meta:
        model = Rule
        fields = ["name", "region", "concern", "min_severity", "channels", "enabled"]
        widgets = {"channels": forms.CheckboxSelectMultiple}


class ChannelForm(forms.ModelForm):
    class Meta:
        model = Channel
        fields = ["name", "kind", "target", "disabled"]

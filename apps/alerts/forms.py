from __future__ import annotations

from datetime import timedelta

from django import forms
from django.utils import timezone

from .models import RULE_FIELDS, Channel, Rule, Silence


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
        fields = RULE_FIELDS
        widgets = {
            "channels": forms.CheckboxSelectMultiple,
            "content_type": forms.HiddenInput,
            "object_id": forms.HiddenInput,
        }

    def clean(self) -> dict:
        data = super().clean()  # the subject pair: Rule.clean
        if data.get("enabled") and not data.get("channels") and not self.instance.is_default:
            self.add_error(
                "channels",
                "Choose at least one channel: an enabled rule without one sends nothing.",
            )
        return data


class ChannelForm(forms.ModelForm):
    """A channel of any kind. The secret is never rendered back: left empty when editing, the
    saved one is kept; the model's ``clean`` checks target and secret for the kind."""

    secret = forms.CharField(
        required=False,
        strip=True,
        max_length=500,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text=Channel._meta.get_field("secret").help_text,
    )

    class Meta:
        model = Channel
        fields = ["name", "kind", "target", "secret", "disabled"]
        widgets = {"target": forms.Textarea(attrs={"rows": 2})}

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk and self.instance.secret:
            self.fields[
                "secret"
            ].help_text = "A secret is saved (not shown). Leave empty to keep it; type a new one to replace it."

    def clean_secret(self) -> str:
        value = self.cleaned_data.get("secret", "")
        if not value and self.instance.pk:
            return self.instance.secret  # kept: the form never shows it
        return value

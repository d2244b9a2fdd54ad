from __future__ import annotations

from django import forms


class ApiKeyForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What uses this key, e.g. 'backup script'.")
    read_only = forms.TypedChoiceField(
        label="Access",
        choices=[("1", "Read-only"), ("0", "Read-write")],
        coerce=lambda v: v == "1",
        initial="1",
        widget=forms.RadioSelect,
    )

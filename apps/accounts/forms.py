from __future__ import annotations

from typing import Any

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

    def __init__(self, *args: Any, read_only_only: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if read_only_only:  # a viewer: read-write is not offered (and refused if posted)
            self.fields["read_only"].widget.choices = [("1", "Read-only")]
            self.fields["read_only"].help_text = "A viewer's keys are read-only."

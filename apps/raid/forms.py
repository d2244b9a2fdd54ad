"""The form of an md-RAID host, in the app: paste the host key, choose SSH or push."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.regions.models import Region

from .models import Host

FIELDS = [
    "name", "region", "collection", "ssh_address", "ssh_port", "ssh_user", "known_hosts",
    "domain_rules", "domain_noun", "interval_s", "enabled",
]  # fmt: skip


class HostForm(forms.ModelForm):
    class Meta:
        model = Host
        fields = FIELDS
        widgets = {"known_hosts": forms.Textarea(attrs={"rows": 3, "spellcheck": "false"})}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["region"].queryset = Region.objects.shown()

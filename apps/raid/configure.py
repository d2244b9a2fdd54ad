"""Adding and editing md-RAID hosts in the app (Admins): paste the host key, choose SSH or push,
"Test SSH" connects as the form stands (through the outbound guard, host key verified) and
shows what it read, before anything is saved; a push host's token is issued on its page."""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse

from apps.regions import editing
from apps.regions.models import Region

from . import ssh
from .collect import ssh_target
from .errors import ParseError
from .models import Host
from .report import assess

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
        if self.instance.pk and self.instance.is_demo:
            self.fields["name"].disabled = True


def try_ssh(host: Host) -> dict[str, Any]:
    """Collect once from the unsaved host; what was read, or the error in words."""
    if not host.ssh_address:
        return {"error": "Give an SSH address to test the connection."}
    try:
        collected = ssh.collect(ssh_target(host))
    except ssh.SshError as error:
        return {"error": str(error)}
    read = {"mdstat": collected.mdstat, "warnings": collected.warnings}
    try:
        report = assess(collected.mdstat, collected.details, host.domain_rules, host.domain_noun)
    except ParseError as error:  # outside text: said in words, never a failed page
        return {**read, "error": str(error)}
    return {**read, "arrays": [(a.name, a.verdict) for a in report.arrays]}


def edit_host(request: HttpRequest, pk: int | None = None) -> HttpResponse:
    return editing.edit_page(request, HostForm, pk, trial=try_ssh)

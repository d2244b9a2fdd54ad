"""The forms of Galera clusters and their nodes, in the app and the admin alike. A node's
password is a reference (an environment variable or a file under the secrets directory), never
the password itself."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.regions.models import Region

from .models import CLUSTER_FIELDS, Cluster, Node

PASSWORD_FIELDS = ("password_env", "password_file")
NODE_FIELDS = [
    "name",
    "mode",
    "host",
    "port",
    "user",
    "password_env",
    "password_file",
    "tls",
    "tls_ca",
    "tls_verify",
]


class NodeForm(forms.ModelForm):
    """The password references show as placeholders: what is typed is given (a move keeps
    it), what is left empty keeps the current one, unless host or port change (then it goes)."""

    class Meta:
        model = Node
        fields = NODE_FIELDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in PASSWORD_FIELDS:
            current = getattr(self.instance, name) if self.instance.pk else ""
            self.initial[name] = ""
            self.fields[name].widget.attrs["placeholder"] = current
            if current:
                self.fields[name].help_text = (
                    f"Now {current}; empty keeps it, but a new host or port forgets it "
                    "unless you type it again."
                )

    def _typed_or_kept(self, name: str) -> str:
        typed = self.cleaned_data.get(name, "")
        return typed or (getattr(self.instance, name) if self.instance.pk else "")

    def clean_password_env(self) -> str:
        return self._typed_or_kept("password_env")

    def clean_password_file(self) -> str:
        return self._typed_or_kept("password_file")

    def save(self, commit: bool = True) -> Node:
        typed = any(self.data.get(self.add_prefix(name)) for name in PASSWORD_FIELDS)
        self.instance.password_given = typed
        return super().save(commit)


class ClusterForm(forms.ModelForm):
    class Meta:
        model = Cluster
        fields = CLUSTER_FIELDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["region"].queryset = Region.objects.shown()

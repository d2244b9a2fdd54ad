from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin

from apps.lib.keep import KeepHistoryAdmin

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


class NodeInline(admin.TabularInline):
    model = Node
    form = NodeForm
    extra = 1
    fields = NODE_FIELDS


@admin.register(Cluster)
class ClusterAdmin(KeepHistoryAdmin, admin.ModelAdmin):
    list_display = ["name", "region", "status", "cluster_size", "expected_data_nodes", "enabled"]
    list_filter = ["region", "status", "enabled"]
    search_fields = ["name"]
    fields = [*CLUSTER_FIELDS, "next_due"]
    inlines = [NodeInline]

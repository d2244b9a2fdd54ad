from __future__ import annotations

from django import forms
from django.contrib import admin

from apps.lib.keep import KeepHistoryAdmin

from .models import Account, Region


class AccountForm(forms.ModelForm):
    """The external id is written, never shown again (as the API treats it)."""

    external_id = forms.CharField(
        label="external id",
        required=False,
        max_length=Account._meta.get_field("external_id").max_length,
        widget=forms.PasswordInput(render_value=False),
        help_text="Sent when assuming the role. Never shown: leave empty to keep the current one.",
    )
    clear_external_id = forms.BooleanField(
        label="clear the external id", required=False, help_text="Assume the role without one."
    )

    class Meta:
        model = Account
        fields = ["name", "role_arn", "external_id", "home_region", "enabled"]

    def clean_external_id(self) -> str:
        typed = self.cleaned_data["external_id"]
        return typed or (self.instance.external_id if self.instance.pk else "")

    def clean(self) -> dict:
        cleaned = super().clean()
        if cleaned.get("clear_external_id"):
            cleaned["external_id"] = ""
        return cleaned


@admin.register(Account)
class AccountAdmin(KeepHistoryAdmin, admin.ModelAdmin):
    form = AccountForm
    list_display = ["name", "role_arn", "home_region", "enabled", "discovered", "last_error"]
    readonly_fields = ["is_demo", "discovered", "last_error", "last_error_at"]
    fields = [
        "name",
        "role_arn",
        "external_id",
        "clear_external_id",
        "home_region",
        "enabled",
        *readonly_fields,
    ]


@admin.register(Region)
class RegionAdmin(KeepHistoryAdmin, admin.ModelAdmin):
    list_display = ["code", "name", "kind", "account", "opt_in_status", "enabled"]
    list_filter = ["kind", "opt_in_status", "enabled", "account"]
    list_editable = ["enabled"]
    search_fields = ["code", "name"]

from __future__ import annotations

from django.contrib import admin

from apps.lib.keep import HistoryAdmin, KeepHistoryAdmin

from .forms import ChannelForm
from .models import (
    Channel,
    Dependency,
    EscalationLevel,
    EscalationPolicy,
    Incident,
    MaintenanceWindow,
    Notification,
    Rule,
    Silence,
    Transition,
)


class ReadOnlyAdmin(HistoryAdmin, admin.ModelAdmin):
    """History: shown, never added, changed or deleted here (``apps.lib.keep``)."""


@admin.register(Transition)
class TransitionAdmin(ReadOnlyAdmin):
    list_display = [
        "created",
        "region",
        "concern",
        "subject_label",
        "old_status",
        "new_status",
        "reason",
    ]
    list_filter = ["concern", "new_status", "region"]


@admin.register(Incident)
class IncidentAdmin(ReadOnlyAdmin):
    list_display = ["subject_label", "region", "status", "opened", "closed", "acknowledged"]
    list_filter = ["status", "concern"]


@admin.register(Notification)
class NotificationAdmin(ReadOnlyAdmin):
    list_display = ["created", "transition", "channel", "kind", "state", "attempts", "last_error"]
    list_filter = ["state", "kind", "channel"]


@admin.register(Channel)
class ChannelAdmin(KeepHistoryAdmin, admin.ModelAdmin):
    """Validated as on the page (``Channel.clean``); the secret is never rendered back."""

    form = ChannelForm
    list_display = ["name", "kind", "shown_target", "disabled", "last_success", "last_error"]
    readonly_fields = ["last_success", "last_error", "last_error_at", "config_error"]

    @admin.display(description="target")
    def shown_target(self, channel: Channel) -> str:
        return channel.shown_target


@admin.register(Rule)
class RuleAdmin(admin.ModelAdmin):
    list_display = ["name", "region", "concern", "min_severity", "enabled", "is_default"]
    filter_horizontal = ["channels"]


@admin.register(Silence)
class SilenceAdmin(admin.ModelAdmin):
    list_display = ["region", "concern", "starts", "ends", "author", "comment"]
    exclude = ["author"]

    def save_model(self, request, obj, form, change) -> None:
        if not change:
            obj.author = request.user
        super().save_model(request, obj, form, change)


class EscalationLevelInline(admin.TabularInline):
    model = EscalationLevel
    extra = 1
    filter_horizontal = ["channels"]


@admin.register(EscalationPolicy)
class EscalationPolicyAdmin(admin.ModelAdmin):
    list_display = ["name", "created"]
    inlines = [EscalationLevelInline]


@admin.register(MaintenanceWindow)
class MaintenanceWindowAdmin(admin.ModelAdmin):
    list_display = [
        "name", "region", "concern", "days", "start", "cron", "minutes", "time_zone", "enabled",
    ]  # fmt: skip
    exclude = ["author"]

    def save_model(self, request, obj, form, change) -> None:
        if not change:
            obj.author = request.user
        super().save_model(request, obj, form, change)


@admin.register(Dependency)
class DependencyAdmin(admin.ModelAdmin):
    list_display = ["__str__", "comment", "created"]
    exclude = ["author"]

    def save_model(self, request, obj, form, change) -> None:
        if not change:
            obj.author = request.user
        super().save_model(request, obj, form, change)

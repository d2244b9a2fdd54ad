from __future__ import annotations

from django.contrib import admin

from apps.lib.keep import KeepHistoryAdmin

from .forms import ChannelForm
from .models import (
    Channel,
    EscalationLevel,
    EscalationPolicy,
    Incident,
    MaintenanceWindow,
    Notification,
    Rule,
    Silence,
    Transition,
)


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False


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
    list_display = ["name", "kind", "target", "disabled", "last_success", "last_error"]
    readonly_fields = ["last_success", "last_error", "last_error_at", "config_error"]


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
    list_display = ["name", "region", "concern", "days", "start", "minutes", "time_zone", "enabled"]
    exclude = ["author"]

    def save_model(self, request, obj, form, change) -> None:
        if not change:
            obj.author = request.user
        super().save_model(request, obj, form, change)

from __future__ import annotations

from django.contrib import admin

from .models import Transition


@admin.register(Transition)
class TransitionAdmin(admin.ModelAdmin):
    list_display = ["created", "concern", "subject_label", "old_status", "new_status", "reason"]
    list_filter = ["concern", "new_status", "region"]
    readonly_fields = [f.name for f in Transition._meta.fields]

    def has_add_permission(self, request: object) -> bool:
        return False

"""Authentication backend: Django's ``ModelBackend``, plus the Admin group's every permission.

Admins (members of the ``Admin`` group) hold every permission, those of models added later
included, without a migration listing them; superusers already do in Django. Everyone else
gets exactly what their groups and own permissions give (``ModelBackend``).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Permission

from .roles import is_admin


class RoleBackend(ModelBackend):
    def has_perm(self, user_obj: Any, perm: str, obj: Any = None) -> bool:
        if is_admin(user_obj):
            return True
        return super().has_perm(user_obj, perm, obj)

    def has_module_perms(self, user_obj: Any, app_label: str) -> bool:
        if is_admin(user_obj):
            return True
        return super().has_module_perms(user_obj, app_label)

    def get_all_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        if is_admin(user_obj) and obj is None:
            if not hasattr(user_obj, "_vigil_all_perms"):
                rows = Permission.objects.values_list("content_type__app_label", "codename")
                user_obj._vigil_all_perms = {f"{app}.{codename}" for app, codename in rows}
            return user_obj._vigil_all_perms
        return super().get_all_permissions(user_obj, obj)
